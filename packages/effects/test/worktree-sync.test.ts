import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { GitCommitSpec } from "@idem/effects";
import { classifyError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { FileLock } from "../../runtime/src/file-lock.js";
import { createEffects, type Effects } from "../src/index.js";
import { addRepo, clock, commitsWithKey, git, type Sandbox, sandbox } from "./helpers.js";

const spec = (files: GitCommitSpec["files"], message = "agent"): GitCommitSpec => ({
  kind: "git.commit",
  repo: "site",
  message,
  files,
});

/** The index and working tree are exactly HEAD: what git itself would leave after a checkout. */
function expectInStep(repo: string): void {
  expect(git(repo, "status", "--porcelain", "--untracked-files=all")).toBe("");
  expect(git(repo, "write-tree")).toBe(git(repo, "rev-parse", "HEAD^{tree}"));
  expect(git(repo, "diff-index", "--cached", "HEAD")).toBe("");
}

describe("checked-out branch sync without git processes", () => {
  let sb: Sandbox;
  let fx: Effects;
  afterEach(async () => {
    await fx?.close();
    sb?.cleanup();
  });

  for (const version of ["2", "4"]) {
    it(`keeps index (v${version}) and working tree exact through nested creates, changes, deletes and exec bits`, async () => {
      sb = sandbox();
      const repo = addRepo(sb, "site");
      git(repo, "config", "index.version", version);
      writeFileSync(join(repo, "run.sh"), "#!/bin/sh\n");
      chmodSync(join(repo, "run.sh"), 0o755);
      git(repo, "add", "run.sh");
      git(repo, "commit", "-qm", "human");
      fx = createEffects(sb.config, { clock: clock() });
      const steps: GitCommitSpec["files"][] = [
        [{ path: "a/b/c.txt", content: "c\n" }],
        [
          { path: "a/d.txt", content: "d\n" },
          { path: "run.sh", content: "#!/bin/sh\necho\n" },
        ],
        [{ path: "a/b/c.txt", delete: true }],
        [
          { path: "z/y/x.txt", content: "x\n" },
          { path: "README.md", content: "changed\n" },
        ],
        [
          { path: "a/d.txt", delete: true },
          { path: "a.txt", content: "A\n" },
        ],
      ];
      for (const [i, files] of steps.entries()) {
        const s = spec(files, `step ${i}`);
        await fx.apply(s, `sync/${i}`, { probed: await fx.probe(s, `sync/${i}`) });
        expectInStep(repo);
      }
      expect(existsSync(join(repo, "a"))).toBe(false); // emptied folders go, as with git checkout
      expect(git(repo, "ls-files", "-s", "run.sh").split(" ")[0]).toBe("100755");
      // a human commit on top records exactly the human's change (the cache tree idem wrote is right)
      writeFileSync(join(repo, "z/y/x.txt"), "human\n");
      git(repo, "commit", "-qam", "human edit");
      expect(git(repo, "diff", "--name-only", "HEAD~1", "HEAD")).toBe("z/y/x.txt");
      expectInStep(repo);
      git(repo, "fsck", "--strict");
    });
  }

  it("takes back what it staged when the branch then cannot move: no temporary file, the index as it was", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site");
    fx = createEffects(sb.config, { clock: clock() });
    const first = spec([{ path: "a/one.txt", content: "1\n" }]);
    await fx.apply(first, "stage/0", { probed: await fx.probe(first, "stage/0") });
    const index = readFileSync(join(repo, ".git", "index"));
    // A human's git holds the watermark's lock: the ref transaction fails after the staging.
    const held = join(repo, ".git", "refs", "idem", "b", "main", "w.lock");
    writeFileSync(held, "");
    const next = spec([
      { path: "a/one.txt", content: "changed\n" },
      { path: "README.md", content: "new\n" },
    ]);
    const err = await fx
      .apply(next, "stage/1", { probed: await fx.probe(next, "stage/1") })
      .catch((e) => e);
    expect(classifyError(err)).toBe("transient");
    expect(readdirSync(join(repo, "a"))).toEqual(["one.txt"]);
    expect(readdirSync(repo).filter((f) => f.includes(".idem-"))).toEqual([]);
    expect(readFileSync(join(repo, ".git", "index")).equals(index)).toBe(true);
    expect(existsSync(join(repo, ".git", "index.lock"))).toBe(false);
    expectInStep(repo);
    rmSync(held);
    await fx.apply(next, "stage/1", { probed: await fx.probe(next, "stage/1") });
    expect(readFileSync(join(repo, "a/one.txt"), "utf8")).toBe("changed\n");
    expectInStep(repo);
  });

  it("leaves a human's unrelated unstaged change alone and still sees it as changed", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site");
    fx = createEffects(sb.config, { clock: clock() });
    writeFileSync(join(repo, "README.md"), "human, unsaved\n");
    for (let i = 0; i < 3; i++) {
      const s = spec([{ path: `n${i}.txt`, content: `${i}\n` }]);
      await fx.apply(s, `keep/${i}`, { probed: await fx.probe(s, `keep/${i}`) });
    }
    expect(readFileSync(join(repo, "README.md"), "utf8")).toBe("human, unsaved\n");
    expect(git(repo, "status", "--porcelain")).toBe("M README.md");
    expect(git(repo, "show", "HEAD:README.md")).toBe("hello");
  });

  it("falls back to git when attributes could change the bytes, with git's result", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site");
    writeFileSync(join(repo, ".gitattributes"), "*.txt text eol=crlf\n");
    git(repo, "add", ".gitattributes");
    git(repo, "commit", "-qm", "attributes");
    fx = createEffects(sb.config, { clock: clock() });
    const s = spec([{ path: "t.txt", content: "one\ntwo\n" }]);
    await fx.apply(s, "attr/0", { probed: await fx.probe(s, "attr/0") });
    expect(readFileSync(join(repo, "t.txt"), "utf8")).toBe("one\r\ntwo\r\n");
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("finishes a sync a killed idem left half done (marker, index at the old commit, one file written)", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site");
    fx = createEffects(sb.config, { clock: clock() });
    const s = spec([
      { path: "p/one.txt", content: "1\n" },
      { path: "p/two.txt", content: "2\n" },
    ]);
    const before = git(repo, "rev-parse", "HEAD");
    const d = await fx.apply(s, "half/0", { probed: await fx.probe(s, "half/0") });
    // Rebuild the state of a crash after the ref move: index still at the old commit, one of the
    // two files already in place, a temporary file left behind, and the marker.
    git(repo, "read-tree", before);
    const tmp = join(repo, "p", ".two.txt.idem-abc123");
    writeFileSync(tmp, "2\n");
    rmSync(join(repo, "p", "two.txt"));
    writeFileSync(
      join(repo, ".git", "idem", "pending.json"),
      JSON.stringify({
        branch: "main",
        base: before,
        commit: d.commit,
        refs: ["refs/heads/main"],
        sync: true,
        paths: ["p/one.txt", "p/two.txt"],
        nonce: "abc123",
      }),
    );
    await fx.close();
    fx = createEffects(sb.config, { clock: clock() });
    const next = spec([{ path: "after.txt", content: "a\n" }]);
    await fx.apply(next, "half/1", { probed: await fx.probe(next, "half/1") });
    expect(existsSync(tmp)).toBe(false);
    expect(readFileSync(join(repo, "p/two.txt"), "utf8")).toBe("2\n");
    expectInStep(repo);
    expect(existsSync(join(repo, ".git", "idem", "pending.json"))).toBe(false);
  });

  it("a recovery marker that is not JSON stops the apply with an error naming it; nothing moves", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site");
    fx = createEffects(sb.config, { clock: clock() });
    const first = spec([{ path: "a.txt", content: "a\n" }]);
    await fx.apply(first, "marker/0", { probed: await fx.probe(first, "marker/0") });
    const head = git(repo, "rev-parse", "HEAD");
    const marker = join(repo, ".git", "idem", "pending.json");
    // The apply writes its marker by rename and leaves no temporary file behind.
    expect(existsSync(`${marker}.tmp`)).toBe(false);
    writeFileSync(marker, '{"branch":"main","ba');
    const s = spec([{ path: "b.txt", content: "b\n" }]);
    const err = await fx.apply(s, "marker/1").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "INTEGRITY" });
    expect((err as Error).message).toContain(marker);
    expect(git(repo, "rev-parse", "HEAD")).toBe(head);
    expect(existsSync(join(repo, "b.txt"))).toBe(false);

    rmSync(marker);
    await fx.apply(s, "marker/1");
    expect(readFileSync(join(repo, "b.txt"), "utf8")).toBe("b\n");
    expectInStep(repo);
  });

  it("an unreadable HEAD stops the apply instead of passing for 'nothing checked out' and moving the branch under the working tree", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site");
    fx = createEffects(sb.config, { clock: clock() });
    const first = spec([{ path: "a.txt", content: "a\n" }]);
    await fx.apply(first, "head/0", { probed: await fx.probe(first, "head/0") });
    const head = git(repo, "rev-parse", "main");
    const headFile = join(repo, ".git", "HEAD");
    const saved = readFileSync(headFile, "utf8");
    // Root reads any file whatever its mode: a directory in its place is what cannot be read here.
    rmSync(headFile);
    mkdirSync(headFile);
    const s = spec([{ path: "b.txt", content: "b\n" }]);
    const err = await fx.apply(s, "head/1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as NodeJS.ErrnoException).code).toBe("EISDIR");
    rmSync(headFile, { recursive: true });
    writeFileSync(headFile, saved);
    expect(git(repo, "rev-parse", "main")).toBe(head);
    expect(existsSync(join(repo, "b.txt"))).toBe(false);
    await fx.apply(s, "head/1");
    expect(readFileSync(join(repo, "b.txt"), "utf8")).toBe("b\n");
    expectInStep(repo);
  });

  it("refuses staged changes found entry by entry when git's cache tree does not vouch for them", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site");
    fx = createEffects(sb.config, { clock: clock() });
    writeFileSync(join(repo, "README.md"), "staged\n");
    git(repo, "add", "README.md");
    const head = git(repo, "rev-parse", "HEAD");
    const s = spec([{ path: "x.txt", content: "x\n" }]);
    await expect(fx.apply(s, "staged/0")).rejects.toMatchObject({ code: "DIRTY_WORKTREE" });
    expect(git(repo, "rev-parse", "HEAD")).toBe(head);
    expect(git(repo, "diff", "--cached", "--name-only")).toBe("README.md");
  });
});

describe("the read-tree path and git's index lock", () => {
  let sb: Sandbox;
  let fx: Effects;
  afterEach(async () => {
    await fx?.close();
    sb?.cleanup();
  });

  it("a git command holding index.lock is LOCKED (transient, retried), not a dirty working tree; nothing moves", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site");
    // A .gitattributes in the tree sends the sync to `read-tree -m -u`, which takes index.lock.
    writeFileSync(join(repo, ".gitattributes"), "*.txt text\n");
    git(repo, "add", ".gitattributes");
    git(repo, "commit", "-q", "-m", "attributes");
    fx = createEffects(sb.config, { clock: clock() });
    const head = git(repo, "rev-parse", "HEAD");
    writeFileSync(join(repo, ".git", "index.lock"), "");
    const s = spec([{ path: "x.txt", content: "x\n" }]);
    const err = await fx.apply(s, "held/0").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "LOCKED" });
    expect(classifyError(err)).toBe("transient");
    expect(git(repo, "rev-parse", "HEAD")).toBe(head);
    expect((await fx.probe(s, "held/0")).status).toBe("absent");

    rmSync(join(repo, ".git", "index.lock"));
    await fx.apply(s, "held/0");
    expect(readFileSync(join(repo, "x.txt"), "utf8")).toBe("x\n");
    expect(git(repo, "status", "--porcelain")).toBe("");
  });
});

describe("key refs below the branch watermark", () => {
  let sb: Sandbox;
  let fx: Effects;
  afterEach(async () => {
    await fx?.close();
    sb?.cleanup();
  });

  it("a reset below a key's commit makes it absent; the next apply drops the stale key refs", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site", { bare: true });
    fx = createEffects(sb.config, { clock: clock() });
    const s = (i: number) => spec([{ path: `w${i}.txt`, content: `${i}\n` }]);
    for (let i = 0; i < 3; i++) await fx.apply(s(i), `wm/${i}`);
    const first = git(repo, "rev-parse", "main~1");
    git(repo, "update-ref", "refs/heads/main", first);
    expect((await fx.probe(s(2), "wm/2")).status).toBe("absent");
    expect((await fx.probe(s(1), "wm/1")).status).toBe("present");
    expect((await fx.probe(s(0), "wm/0")).status).toBe("present");
    await fx.apply(s(3), "wm/3");
    const refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/idem/");
    expect(refs).not.toContain("wm%2F2");
    expect(refs).toContain("wm%2F1");
    expect((await fx.probe(s(2), "wm/2")).status).toBe("absent");
    await fx.apply(s(2), "wm/2");
    expect(commitsWithKey(repo, "wm/2")).toHaveLength(1);
    // the branch watermark is the head again; every key answers from its ref
    expect(git(repo, "rev-parse", "refs/idem/b/main/w")).toBe(git(repo, "rev-parse", "main"));
    for (let i = 0; i < 4; i++) expect((await fx.probe(s(i), `wm/${i}`)).status).toBe("present");
  });
});

describe("git children keep idem's repo lock", () => {
  let sb2: Sandbox;
  it("a child that inherited the lock's descriptor holds it after its parent let go", async () => {
    sb2 = sandbox();
    const path = join(sb2.dir, "lock");
    const a = new FileLock(path, { timeoutMs: 10_000 });
    const release = await a.acquire();
    const spawnedAt = performance.now();
    const child = spawn("sleep", ["0.6"], {
      stdio: ["ignore", "ignore", "ignore", a.fd as number],
    });
    const exited = new Promise<void>((r) => child.on("exit", () => r()));
    await release(); // the parent drops its descriptor, as a killed idem would
    const b = new FileLock(path, { timeoutMs: 10_000 });
    const releaseB = await b.acquire();
    // The child holds the lock until its sleep ends, at least 600 ms after it was spawned. (Not
    // compared with the "exit" event: the kernel frees the lock before Node reports the exit.)
    expect(performance.now() - spawnedAt).toBeGreaterThanOrEqual(595);
    await exited;
    await releaseB();
    sb2.cleanup();
  });
});
