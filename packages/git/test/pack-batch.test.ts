import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { addRepo, git, type Sandbox, sandbox } from "../../effects/test/helpers.js";
import { GitRepo } from "../src/git-repo.js";
import { keyRef } from "../src/key-index.js";
import { objectId, serializeTree } from "../src/plumbing/git-objects.js";
import { PACKS_BEFORE_ROLLUP, PackRollup } from "../src/plumbing/pack-rollup.js";
import { writePack } from "../src/plumbing/pack-writer.js";
import { treeWith } from "../src/plumbing/tree-writer.js";

// A local branch's batch of in-process commits goes to disk as one pack (two files, two fsyncs)
// instead of three loose objects per commit; git must read that pack as one of its own.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function bareRepo(format: "sha1" | "sha256"): string {
  const dir = mkdtempSync(join(tmpdir(), "idem-pack-"));
  dirs.push(dir);
  execFileSync("git", ["init", "-q", "--bare", `--object-format=${format}`, dir]);
  return dir;
}

const run = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-C", dir, ...args], { encoding: "utf8" });

/** The loose object files under a repository's objects folder. */
function looseObjects(gitDir: string): string[] {
  const objects = join(gitDir, "objects");
  return readdirSync(objects)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => readdirSync(join(objects, d)).map((f) => d + f));
}

describe("writePack", () => {
  for (const format of ["sha1", "sha256"] as const) {
    it(`writes a pack and index git reads, verifies and fscks (${format})`, () => {
      const dir = bareRepo(format);
      // Enough objects that the fan-out table spreads over many first bytes; sizes past the
      // 4 bits and 7 bits of a pack entry's size header; one object named twice.
      const blobs = Array.from({ length: 300 }, (_, i) =>
        Buffer.from(`${i}\n`.repeat(i % 7 === 0 ? 5000 : i + 1)),
      );
      const objects = blobs.map((body) => ({
        oid: objectId(format, "blob", body),
        type: "blob",
        body,
      }));
      const tree = serializeTree(
        objects.slice(0, 20).map((o, i) => ({ mode: "100644", name: `f${i}`, oid: o.oid })),
      );
      const treeOid = objectId(format, "tree", tree);
      const all = [
        ...objects,
        { oid: treeOid, type: "tree", body: tree },
        objects[3] as (typeof objects)[0],
      ];
      const files = writePack(join(dir, "objects"), format, all);
      expect(files.pack).toMatch(/\/pack\/pack-[0-9a-f]+\.pack$/);
      expect(run(dir, "verify-pack", files.idx)).toBe("");
      expect(run(dir, "count-objects", "-v")).toContain(`in-pack: ${objects.length + 1}`);
      expect(run(dir, "cat-file", "-p", objects[7]?.oid as string)).toBe(blobs[7]?.toString());
      expect(run(dir, "ls-tree", treeOid).split("\n")).toHaveLength(21);
      // fsck --full checks every object's bytes against its id and the pack's and index's hashes.
      run(dir, "fsck", "--full", "--strict", "--no-dangling");
    });
  }
});

describe("PackRollup", () => {
  it("rolls the packs up once as many as it waits for were written, every object still there", async () => {
    const dir = bareRepo("sha1");
    const rollup = new PackRollup(dir);
    const oids: string[] = [];
    for (let i = 0; i < PACKS_BEFORE_ROLLUP; i++) {
      const body = Buffer.from(`pack ${i}\n`);
      oids.push(objectId("sha1", "blob", body));
      writePack(join(dir, "objects"), "sha1", [{ oid: oids[i] as string, type: "blob", body }]);
      rollup.wrote();
      // Not due before the last one.
      if (i < PACKS_BEFORE_ROLLUP - 1) await rollup.idle();
    }
    await rollup.idle();
    const packs = readdirSync(join(dir, "objects/pack")).filter((f) => f.endsWith(".pack"));
    expect(packs.length).toBeLessThan(PACKS_BEFORE_ROLLUP / 4);
    for (const [i, oid] of oids.entries())
      expect(run(dir, "cat-file", "-p", oid)).toBe(`pack ${i}\n`);
  });
});

function openRepo(sb: Sandbox, path: string, durable: boolean): GitRepo {
  const tmp = join(sb.dir, "tmp");
  mkdirSync(tmp, { recursive: true });
  return new GitRepo(
    "site",
    { path, branch: "main", branches: [], author: { name: "idem", email: "idem@localhost" } },
    {
      clock: new ManualClock(1_700_000_000_000),
      durable,
      lockTimeoutMs: 10_000,
      lockLingerMs: 0,
      tmpDir: async () => tmp,
    },
  );
}

describe("a local branch's batch", () => {
  let sb: Sandbox;
  let repo: GitRepo | undefined;
  afterEach(() => {
    repo?.close();
    repo = undefined;
    sb?.cleanup();
  });

  /** Queues writes of f/<i>.txt probed at main's head, all waiting at once; answers their details. */
  async function queueAll(r: GitRepo, n: number, runsGit = -1): Promise<unknown[]> {
    const head = git(r.config.path, "rev-parse", "main");
    // Held lock: every apply queues before the first batch is taken.
    let release!: () => void;
    let locked!: () => void;
    const held = new Promise<void>((ok) => {
      locked = ok;
    });
    const done = r.withLock(
      () =>
        new Promise<void>((ok) => {
          release = ok;
          locked();
        }),
    );
    await held;
    const answers = Array.from({ length: n }, (_, i) =>
      r.queueCommit("main", {
        key: `job-${i}/0`,
        base: head,
        paths: [`f/${i}.txt`],
        message: `write f/${i}.txt`,
        inProcess: i !== runsGit,
        async tree(baseTree, objects) {
          if (i === runsGit && baseTree !== null) {
            // A tree that runs git reads the batch's earlier commits' trees from disk.
            execFileSync("git", ["-C", r.config.path, "cat-file", "-e", baseTree]);
            return treeWith(r.objects, baseTree, [
              { parts: ["f", `${i}.txt`], content: Buffer.from(`${i}\n`) },
            ]);
          }
          return treeWith(objects, baseTree, [
            { parts: ["f", `${i}.txt`], content: Buffer.from(`${i}\n`) },
          ]);
        },
      }),
    );
    release();
    await done;
    return Promise.all(answers);
  }

  it("writes its in-process commits' objects as one pack, no loose object, and git reads them all", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path, true);
    const before = looseObjects(join(path, ".git"));
    await queueAll(repo, 6);
    expect(looseObjects(join(path, ".git"))).toEqual(before);
    const packs = readdirSync(join(path, ".git/objects/pack")).filter((f) => f.endsWith(".pack"));
    // The first effect goes alone (taken at once), the other five in the next batch.
    expect(packs).toHaveLength(2);
    expect(git(path, "rev-list", "--count", "main")).toBe("7");
    expect(git(path, "show", "main:f/5.txt")).toBe("5");
    expect(git(path, "rev-parse", keyRef("main", "job-3/0"))).toBe(
      git(path, "rev-parse", "main~2"),
    );
    expect(git(path, "status", "--porcelain")).toBe("");
    git(path, "fsck", "--full", "--strict", "--no-dangling");
  });

  it("puts what the batch built so far on disk before a tree that runs git", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path, true);
    // The fourth effect's tree runs git on its parent's tree, built in this batch.
    await queueAll(repo, 6, 3);
    expect(git(path, "rev-list", "--count", "main")).toBe("7");
    expect(git(path, "show", "main:f/3.txt")).toBe("3");
    git(path, "fsck", "--full", "--strict", "--no-dangling");
  });

  it("writes loose objects in a repository that is not durable", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path, false);
    const before = looseObjects(join(path, ".git")).length;
    await queueAll(repo, 3);
    expect(looseObjects(join(path, ".git")).length).toBe(before + 12); // blob, f/, root tree, commit each
    expect(readdirSync(join(path, ".git/objects/pack")).filter((f) => f.endsWith(".pack"))).toEqual(
      [],
    );
  });
});
