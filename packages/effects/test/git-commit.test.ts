import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GitCommitSpec } from "@idem/effects";
import { isIdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { createEffects, type Effects } from "../src/index.js";
import { addRepo, clock, commitsWithKey, git, type Sandbox, sandbox } from "./helpers.js";

const spec = (
  files: GitCommitSpec["files"],
  extra: Partial<GitCommitSpec> = {},
): GitCommitSpec => ({
  kind: "git.commit",
  repo: "site",
  message: "agent: update docs",
  files,
  ...extra,
});

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    if (isIdemError(e) && e.code === code) return;
    throw new Error(`expected ${code}, got ${String(e)}`);
  }
  throw new Error(`expected ${code}, but it succeeded`);
}

describe("git.commit", () => {
  let sb: Sandbox;
  let fx: Effects;
  afterEach(async () => {
    await fx?.close();
    sb?.cleanup();
  });

  function setup(opts: Parameters<typeof addRepo>[2] = {}) {
    sb = sandbox();
    const repo = addRepo(sb, "site", opts);
    fx = createEffects(sb.config, { clock: clock() });
    return repo;
  }

  it("applies, then probes present with the commit, in a checked-out repo whose working tree follows", async () => {
    const repo = setup();
    const s = spec([{ path: "docs/a.md", content: "A\n" }]);
    const p = await fx.probe(s, "job-1/0");
    expect(p.status).toBe("absent");
    const d = await fx.apply(s, "job-1/0", { probed: p });
    expect(d.commit).toBe(git(repo, "rev-parse", "main"));
    expect(readFileSync(join(repo, "docs/a.md"), "utf8")).toBe("A\n");
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(git(repo, "log", "-1", "--format=%an <%ae>%n%B", "main")).toBe(
      "idem <idem@localhost>\nagent: update docs\n\nIdem-Effect: job-1/0",
    );
    expect(await fx.probe(s, "job-1/0")).toEqual({
      status: "present",
      detail: { commit: d.commit },
    });
    expect(git(repo, "fsck", "--strict")).toBe("");
  });

  it("applying twice leaves one commit carrying the key", async () => {
    const repo = setup();
    const s = spec([{ path: "a.txt", content: "one\n" }]);
    await fx.apply(s, "job-2/0");
    const again = await fx.apply(s, "job-2/0");
    expect(again.commit).toBe(git(repo, "rev-parse", "main"));
    expect(commitsWithKey(repo, "job-2/0")).toHaveLength(1);
    // a stale absent probe taken before the first apply cannot commit again
  });

  it("works on a bare repo and on a branch that is not checked out", async () => {
    sb = sandbox();
    const bare = addRepo(sb, "site", { bare: true, branches: ["dev"] });
    git(bare, "branch", "dev", "main");
    fx = createEffects(sb.config, { clock: clock() });
    const s = spec([{ path: "x/y/z.txt", content: "deep\n" }], { branch: "dev" });
    const d = await fx.apply(s, "job-3/0", { probed: await fx.probe(s, "job-3/0") });
    expect(git(bare, "show", "dev:x/y/z.txt")).toBe("deep");
    expect(git(bare, "rev-parse", "main")).not.toBe(d.commit);
    expect((await fx.probe(s, "job-3/0")).status).toBe("present");
    expect((await fx.probe({ ...s, branch: undefined }, "job-3/0")).status).toBe("absent");
  });

  it("creates the branch in an empty repo, and refuses a missing branch in a non-empty one", async () => {
    const repo = setup({ empty: true, branches: ["other"] });
    const s = spec([{ path: "first.txt", content: "1\n" }]);
    const p = await fx.probe(s, "job-4/0");
    expect(p).toEqual({ status: "absent", detail: { base: null } });
    await fx.apply(s, "job-4/0", { probed: p });
    expect(readFileSync(join(repo, "first.txt"), "utf8")).toBe("1\n");
    expect((await fx.probe(s, "job-4/0")).status).toBe("present");
    await expectCode(fx.probe({ ...s, branch: "other" }, "job-4/1"), "TARGET_MISSING");
  });

  it("deletes files, keeps the exec bit, and leaves other files alone", async () => {
    const repo = setup();
    writeFileSync(join(repo, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
    writeFileSync(join(repo, "old.txt"), "old\n");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "human");
    await fx.apply(
      spec([
        { path: "run.sh", content: "#!/bin/sh\necho hi\n" },
        { path: "old.txt", delete: true },
      ]),
      "job-5/0",
    );
    expect(git(repo, "ls-tree", "main", "run.sh").split(/\s/)[0]).toBe("100755");
    expect(existsSync(join(repo, "old.txt"))).toBe(false);
    expect(readFileSync(join(repo, "README.md"), "utf8")).toBe("hello\n");
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("a branch that moved between probe and apply makes the apply fail, not commit", async () => {
    const repo = setup();
    const s = spec([{ path: "a.txt", content: "a\n" }]);
    const p = await fx.probe(s, "job-6/0");
    writeFileSync(join(repo, "human.txt"), "h\n");
    git(repo, "add", "human.txt");
    git(repo, "commit", "-q", "-m", "human moved the branch");
    const before = git(repo, "rev-parse", "main");
    await expectCode(fx.apply(s, "job-6/0", { probed: p }), "TARGET_MOVED");
    expect(git(repo, "rev-parse", "main")).toBe(before);
    expect(commitsWithKey(repo, "job-6/0")).toHaveLength(0);
    // re-probing and applying works
    const p2 = await fx.probe(s, "job-6/0");
    await fx.apply(s, "job-6/0", { probed: p2 });
    expect(commitsWithKey(repo, "job-6/0")).toHaveLength(1);
  });

  it("refuses a dirty working tree: unstaged changes to the paths, staged changes anywhere, untracked files in the way", async () => {
    const repo = setup();
    writeFileSync(join(repo, "README.md"), "human edit\n");
    const before = git(repo, "rev-parse", "main");
    await expectCode(
      fx.apply(spec([{ path: "README.md", content: "agent\n" }]), "job-7/0"),
      "DIRTY_WORKTREE",
    );
    expect(readFileSync(join(repo, "README.md"), "utf8")).toBe("human edit\n");
    // an unrelated unstaged change is kept and not swept in
    const d = await fx.apply(spec([{ path: "other.txt", content: "o\n" }]), "job-7/1");
    expect(readFileSync(join(repo, "README.md"), "utf8")).toBe("human edit\n");
    expect(git(repo, "show", `${d.commit}:README.md`)).toBe("hello");
    // staged change anywhere
    writeFileSync(join(repo, "staged.txt"), "s\n");
    git(repo, "add", "staged.txt");
    const head = git(repo, "rev-parse", "main");
    await expectCode(
      fx.apply(spec([{ path: "x.txt", content: "x\n" }]), "job-7/2"),
      "DIRTY_WORKTREE",
    );
    git(repo, "reset", "-q", "staged.txt");
    // untracked file where the effect creates one
    await expectCode(
      fx.apply(spec([{ path: "staged.txt", content: "agent\n" }]), "job-7/3"),
      "DIRTY_WORKTREE",
    );
    expect(readFileSync(join(repo, "staged.txt"), "utf8")).toBe("s\n");
    expect(git(repo, "rev-parse", "main")).toBe(head);
    expect(before).not.toBe(head);
  });

  it("a crash between the commit and the caller's record is recovered by the probe (bounded by the hint)", async () => {
    const repo = setup();
    const s = spec([{ path: "c.txt", content: "c\n" }]);
    const p = await fx.probe(s, "job-8/0");
    const d = await fx.apply(s, "job-8/0", { probed: p });
    // the caller "crashed" before recording; a new process probes with the recorded hint
    await fx.close();
    fx = createEffects(sb.config, { clock: clock() });
    expect(
      await fx.probe(s, "job-8/0", {
        hint: {
          base: p.status === "absent" ? (p.detail.base as string) : undefined,
        },
      }),
    ).toEqual({
      status: "present",
      detail: { commit: d.commit },
    });
    // and even without the index ref (a clone or a restore without refs/idem)
    git(repo, "for-each-ref", "--format=%(refname)", "refs/idem/")
      .split("\n")
      .filter(Boolean)
      .forEach((r) => {
        git(repo, "update-ref", "-d", r);
      });
    await fx.close();
    fx = createEffects(sb.config, { clock: clock() });
    expect((await fx.probe(s, "job-8/0")).status).toBe("present");
    expect(await fx.apply(s, "job-8/0")).toEqual({ commit: d.commit });
    expect(commitsWithKey(repo, "job-8/0")).toHaveLength(1);
  });

  it("does not report a key present after the branch was reset past its commit", async () => {
    const repo = setup();
    const s = spec([{ path: "r.txt", content: "r\n" }]);
    const before = git(repo, "rev-parse", "main");
    await fx.apply(s, "job-9/0");
    git(repo, "reset", "-q", "--hard", before);
    expect((await fx.probe(s, "job-9/0")).status).toBe("absent");
    await fx.apply(s, "job-9/0");
    expect(commitsWithKey(repo, "job-9/0")).toHaveLength(1);
  });

  it("scan and probeBatch answer many keys in one pass", async () => {
    const repo = setup();
    for (let i = 0; i < 5; i++)
      await fx.apply(spec([{ path: `f${i}.txt`, content: `${i}\n` }]), `job-10/${i}`);
    const scan = (await fx.scan(spec([]))) ?? new Map();
    expect([...scan.keys()].sort()).toEqual([0, 1, 2, 3, 4].map((i) => `job-10/${i}`));
    const batch = await fx.probeBatch([
      { spec: spec([{ path: "f1.txt", content: "1\n" }]), key: "job-10/1" },
      { spec: spec([{ path: "n.txt", content: "n\n" }]), key: "job-10/9" },
    ]);
    expect(batch.get("job-10/1")?.status).toBe("present");
    expect(batch.get("job-10/9")).toEqual({
      status: "absent",
      detail: { base: git(repo, "rev-parse", "main") },
    });
  });
});
