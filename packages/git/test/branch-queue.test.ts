import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ApplyTicket } from "@idem/kit";
import { type FaultHook, isIdemError, ManualClock } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { addRepo, git, type Sandbox, sandbox } from "../../effects/test/helpers.js";
import { GitRepo } from "../src/git-repo.js";
import { keyRef } from "../src/key-index.js";
import { treeWith } from "../src/plumbing/tree-writer.js";

/** A GitRepo on `path` as the git kinds open it (durable), with `fault` at its fault points. */
function openRepo(sb: Sandbox, path: string, fault?: FaultHook): GitRepo {
  const tmp = join(sb.dir, "tmp");
  mkdirSync(tmp, { recursive: true });
  return new GitRepo(
    "site",
    { path, branch: "main", branches: [], author: { name: "idem", email: "idem@localhost" } },
    {
      clock: new ManualClock(1_700_000_000_000),
      durable: true,
      lockTimeoutMs: 10_000,
      lockLingerMs: 0,
      tmpDir: async () => tmp,
      fault,
    },
  );
}

/** One file written (null: deleted) by an effect `key` probed at `base`, queued on main. */
function queue(
  repo: GitRepo,
  key: string,
  base: string | null,
  path: string,
  content: string | null,
  order?: { after?: ApplyTicket; queued?: (t: ApplyTicket) => void },
): Promise<Record<string, unknown>> {
  return repo.queueCommit("main", {
    key,
    base,
    paths: [path],
    message: `write ${path}`,
    order,
    // In process: the batch holds its objects for one pack, as git.commit's applies do.
    inProcess: true,
    tree: (baseTree, objects) =>
      treeWith(objects, baseTree, [
        { parts: path.split("/"), content: content === null ? null : Buffer.from(content) },
      ]),
  });
}

/**
 * Holds the repo lock until the answered function is called: applies queued meanwhile wait. The
 * first one queued takes the queue's next batch alone (it is taken at once), the rest the one after.
 */
async function holdLock(repo: GitRepo): Promise<{ release: () => void; done: Promise<void> }> {
  let release!: () => void;
  let locked!: () => void;
  const held = new Promise<void>((r) => {
    locked = r;
  });
  const done = repo.withLock(
    () =>
      new Promise<void>((r) => {
        release = r;
        locked();
      }),
  );
  await held;
  return { release, done };
}

/** The moves of main's reflog: [old, new] per line, oldest first. */
function reflog(path: string): [string, string][] {
  return readFileSync(join(path, ".git/logs/refs/heads/main"), "utf8")
    .trim()
    .split("\n")
    .map((l) => l.split(" ").slice(0, 2) as [string, string]);
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isIdemError(e)) return e.code;
    throw e;
  }
  return "resolved";
}

describe("BranchQueue (a local branch's group commit)", () => {
  let sb: Sandbox;
  let repo: GitRepo | undefined;
  afterEach(() => {
    repo?.close();
    repo = undefined;
    sb?.cleanup();
  });

  it("publishes the applies that wait at once in one ref transaction, each key indexed at its own commit", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path);
    const head0 = git(path, "rev-parse", "main");
    const lock = await holdLock(repo);
    // Every effect probed at head0 before any of them landed (the interpreter's early probes).
    const keys = ["job-0/0", "job-1/0", "job-2/0", "job-3/0", "job-4/0"];
    const answers = keys.map((k, i) => queue(repo as GitRepo, k, head0, `f/${i}.txt`, `${i}\n`));
    lock.release();
    await lock.done;
    const details = await Promise.all(answers);
    const commits = git(path, "rev-list", "--reverse", `${head0}..main`).split("\n");
    expect(commits).toHaveLength(5);
    // Each answers its own commit and its parent.
    expect(details).toEqual(
      commits.map((c, i) => ({ commit: c, base: i === 0 ? head0 : commits[i - 1] })),
    );
    // Two ref transactions: the first effect alone, then the four that waited behind it at once.
    expect(reflog(path).slice(-2)).toEqual([
      [head0, commits[0]],
      [commits[0], commits[4]],
    ]);
    for (const [i, k] of keys.entries()) {
      expect(git(path, "rev-parse", keyRef("main", k))).toBe(commits[i]);
      expect(git(path, "log", "-1", "--format=%B", commits[i] as string)).toContain(
        `Idem-Effect: ${k}`,
      );
      expect(await repo.probeKey("main", k)).toEqual({
        status: "present",
        detail: { commit: commits[i] },
      });
      expect(readFileSync(join(path, `f/${i}.txt`), "utf8")).toBe(`${i}\n`);
    }
    expect(git(path, "rev-parse", "refs/idem/b/main/w")).toBe(commits[4]);
    expect(git(path, "status", "--porcelain")).toBe("");
    expect(existsSync(join(path, ".git/idem/pending.json"))).toBe(false);
    expect(git(path, "fsck", "--strict")).toBe("");
  });

  it("publishes at most 64 commits in one ref transaction", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path);
    const head0 = git(path, "rev-parse", "main");
    const lock = await holdLock(repo);
    const answers = Array.from({ length: 70 }, (_, i) =>
      queue(repo as GitRepo, `job-${i}/0`, head0, `f/${i}.txt`, `${i}\n`),
    );
    lock.release();
    await lock.done;
    await Promise.all(answers);
    const commits = git(path, "rev-list", "--reverse", `${head0}..main`).split("\n");
    expect(commits).toHaveLength(70);
    // The first alone (taken at once), then 64, then the 5 left.
    expect(reflog(path).slice(-3)).toEqual([
      [head0, commits[0]],
      [commits[0], commits[64]],
      [commits[64], commits[69]],
    ]);
  });

  it("answers an effect its own earlier commit holds as present, writing nothing for it", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path);
    const head0 = git(path, "rev-parse", "main");
    const first = await queue(repo, "job-0/0", head0, "a.txt", "a\n");
    const lock = await holdLock(repo);
    const alone = queue(repo, "job-1/0", first.commit as string, "b.txt", "b\n");
    // A repeat of job-0/0 probed before it landed, and a new effect probed there too.
    const again = queue(repo, "job-0/0", head0, "a.txt", "a\n");
    const next = queue(repo, "job-2/0", head0, "c.txt", "c\n");
    lock.release();
    await lock.done;
    const b = await alone;
    expect(await again).toEqual({ commit: first.commit, base: head0 });
    expect(await next).toEqual({ commit: git(path, "rev-parse", "main"), base: b.commit });
    expect(git(path, "log", "--format=%s", `${head0}..main`).split("\n")).toEqual([
      "write c.txt",
      "write b.txt",
      "write a.txt",
    ]);
  });

  it("refuses a batch the working tree is dirty for as a whole, then applies its effects one by one: only the dirty path's is refused", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path);
    const head0 = git(path, "rev-parse", "main");
    writeFileSync(join(path, "README.md"), "a human's edit\n");
    const lock = await holdLock(repo);
    const tickets: ApplyTicket[] = [];
    const queued = (t: ApplyTicket) => tickets.push(t);
    const primer = queue(repo, "job-0/0", head0, "p.txt", "p\n");
    const batch = [
      queue(repo, "job-1/0", head0, "a.txt", "a\n", { queued }),
      queue(repo, "job-2/0", head0, "README.md", "agent\n", { queued }),
      queue(repo, "job-3/0", head0, "b.txt", "b\n", { queued }),
    ];
    lock.release();
    await lock.done;
    const p = (await primer).commit as string;
    expect(await Promise.all(batch.map(codeOf))).toEqual([
      "resolved",
      "DIRTY_WORKTREE",
      "resolved",
    ]);
    const [c1, c3] = git(path, "rev-list", "--reverse", `${p}..main`).split("\n");
    // Nothing of the refused batch moved: each of the two moved the branch on its own.
    expect(reflog(path).slice(-2)).toEqual([
      [p, c1],
      [c1, c3],
    ]);
    expect(await batch[0]).toEqual({ commit: c1, base: p });
    expect(await batch[2]).toEqual({ commit: c3, base: c1 });
    expect(git(path, "for-each-ref", keyRef("main", "job-2/0"))).toBe("");
    expect(readFileSync(join(path, "README.md"), "utf8")).toBe("a human's edit\n");
    expect(git(path, "show", "main:README.md")).toBe("hello");
    expect(existsSync(join(path, ".git/idem/pending.json"))).toBe(false);
    // A later run's apply that follows the refused one changes nothing.
    expect(tickets.map((t) => t.state)).toEqual(["done", "failed", "done"]);
    const blocked = queue(repo, "job-4/0", c3 as string, "c.txt", "c\n", { after: tickets[1] });
    expect(await codeOf(blocked)).toBe("ORDER_BLOCKED");
    expect(git(path, "rev-parse", "main")).toBe(c3);
  });

  it("refuses a batch that creates and deletes a path an untracked file holds, as the first commit alone is refused", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path);
    const head0 = git(path, "rev-parse", "main");
    writeFileSync(join(path, "t.txt"), "untracked\n");
    const lock = await holdLock(repo);
    const primer = queue(repo, "job-0/0", head0, "p.txt", "p\n");
    let first!: ApplyTicket;
    const batch = [
      queue(repo, "job-1/0", head0, "t.txt", "agent\n", { queued: (t) => (first = t) }),
    ];
    batch.push(queue(repo, "job-2/0", head0, "t.txt", null, { after: first }));
    lock.release();
    await lock.done;
    const p = (await primer).commit as string;
    expect(await Promise.all(batch.map(codeOf))).toEqual(["DIRTY_WORKTREE", "ORDER_BLOCKED"]);
    expect(git(path, "rev-parse", "main")).toBe(p);
    expect(readFileSync(join(path, "t.txt"), "utf8")).toBe("untracked\n");
  });

  it("answers TARGET_MOVED when the branch moved past the probe by anything but its own commits", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path);
    const head0 = git(path, "rev-parse", "main");
    await queue(repo, "job-0/0", head0, "a.txt", "a\n");
    git(path, "commit", "-q", "--allow-empty", "-m", "a human's commit");
    const human = git(path, "rev-parse", "main");
    expect(await codeOf(queue(repo, "job-1/0", head0, "b.txt", "b\n"))).toBe("TARGET_MOVED");
    expect(git(path, "rev-parse", "main")).toBe(human);
  });

  it("commits a key queued twice in one batch once: the second is TARGET_MOVED, and present once probed again", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    repo = openRepo(sb, path);
    const head0 = git(path, "rev-parse", "main");
    const lock = await holdLock(repo);
    const primer = queue(repo, "job-0/0", head0, "a.txt", "a\n");
    // The same effect queued twice behind it (a run claimed again while its first claim's apply
    // still waited), both probed at head0.
    const first = queue(repo, "job-1/0", head0, "b.txt", "b\n");
    const second = codeOf(queue(repo, "job-1/0", head0, "b.txt", "b\n"));
    lock.release();
    await lock.done;
    await primer;
    const landed = (await first).commit as string;
    expect(await second).toBe("TARGET_MOVED");
    expect(git(path, "log", "--format=%s", `${head0}..main`).split("\n")).toHaveLength(2);
    expect(git(path, "rev-parse", keyRef("main", "job-1/0"))).toBe(landed);
    const probed = await repo.probeKey("main", "job-1/0", undefined);
    expect(probed.status).toBe("present");
  });

  it("leaves a batch killed after its ref transaction for the next holder to finish: every key present, the working tree synced", async () => {
    sb = sandbox();
    const path = addRepo(sb);
    let moves = 0;
    repo = openRepo(sb, path, (point) => {
      // The third ref transaction (the batch of two) is killed once it moved the branch.
      if (point === "interpreter.after-branch-move" && ++moves === 3) throw new Error("killed");
    });
    const head0 = git(path, "rev-parse", "main");
    await queue(repo, "job-0/0", head0, "f/0.txt", "0\n");
    const lock = await holdLock(repo);
    const primer = queue(repo, "job-1/0", head0, "f/1.txt", "1\n");
    const batch = [2, 3].map((i) =>
      queue(repo as GitRepo, `job-${i}/0`, head0, `f/${i}.txt`, `${i}\n`),
    );
    lock.release();
    await lock.done;
    await primer;
    for (const b of batch) await expect(b).rejects.toThrow("killed");
    const head = git(path, "rev-parse", "main");
    expect(git(path, "rev-list", "--count", `${head0}..${head}`)).toBe("4");
    expect(existsSync(join(path, ".git/idem/pending.json"))).toBe(true);
    expect(existsSync(join(path, "f/2.txt"))).toBe(false);
    // What a killed process left: the next one (a fresh GitRepo) recovers under the lock.
    repo.close();
    repo = openRepo(sb, path);
    for (const i of [1, 2, 3]) {
      const p = await repo.probeKey("main", `job-${i}/0`);
      expect(p.status).toBe("present");
    }
    await repo.withLock(async () => {});
    expect(existsSync(join(path, ".git/idem/pending.json"))).toBe(false);
    for (const i of [0, 1, 2, 3])
      expect(readFileSync(join(path, `f/${i}.txt`), "utf8")).toBe(`${i}\n`);
    expect(git(path, "status", "--porcelain")).toBe("");
  });
});
