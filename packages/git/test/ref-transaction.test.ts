import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isIdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { addRepo, git, gitRaw, type Sandbox, sandbox } from "../../effects/test/helpers.js";
import { RefFiles } from "../src/plumbing/ref-files.js";
import { type InProcessRefs, moveRefsInProcess } from "../src/plumbing/ref-transaction.js";

const mover = { name: "idem", email: "idem@x", at: 1_700_000_000_000 };
const steps = { syncObjects: async () => {}, stage: async () => {}, mover };

function setup(sb: Sandbox, alias = "site") {
  const repo = addRepo(sb, alias);
  const gitDir = join(repo, ".git");
  const p: InProcessRefs = {
    alias,
    gitDir,
    refs: new RefFiles(gitDir, 40),
    hexLength: 40,
    durable: true,
  };
  const base = git(repo, "rev-parse", "HEAD");
  git(repo, "commit", "-q", "--allow-empty", "-m", "next");
  const next = git(repo, "rev-parse", "HEAD");
  // The branch back at base, as before an effect moves it to `next`.
  git(repo, "update-ref", "refs/heads/main", base);
  return { repo, gitDir, p, base, next };
}

/** Lock files anywhere under the git folder but idem's own lock. */
function locks(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...locks(p));
    else if (e.name.endsWith(".lock")) out.push(p);
  }
  return out;
}

const ZERO = "0".repeat(40);
const linesFor = (base: string, next: string) => [
  `update refs/heads/main ${next} ${base}`,
  `update refs/idem/b/main/k/job%2F0 ${next}`,
  `update refs/idem/b/main/w ${next} ${ZERO}`,
];

describe("moveRefsInProcess", () => {
  let sb: Sandbox;
  afterEach(() => sb?.cleanup());

  it("moves the refs and writes the reflogs as git update-ref does", async () => {
    sb = sandbox();
    const mine = setup(sb, "mine");
    const theirs = setup(sb, "theirs");
    expect(await moveRefsInProcess(mine.p, linesFor(mine.base, mine.next), steps)).toBe(true);
    gitRaw(
      theirs.repo,
      ["update-ref", "--stdin"],
      `${linesFor(theirs.base, theirs.next).join("\n")}\n`,
    );
    for (const r of ["refs/heads/main", "refs/idem/b/main/k/job%2F0", "refs/idem/b/main/w"]) {
      expect(git(mine.repo, "rev-parse", r)).toBe(mine.next);
      expect(git(theirs.repo, "rev-parse", r)).toBe(theirs.next);
    }
    // The branch's reflog and HEAD's got one line each, in git's format; git reads them.
    const line = `${mine.base} ${mine.next} idem <idem@x> 1700000000 +0000\n`;
    for (const log of ["logs/refs/heads/main", "logs/HEAD"]) {
      expect(readFileSync(join(mine.gitDir, log), "utf8").endsWith(line)).toBe(true);
      const their = readFileSync(join(theirs.gitDir, log), "utf8").trim().split("\n").at(-1);
      expect(their?.startsWith(`${theirs.base} ${theirs.next} Human <h@x> `)).toBe(true);
    }
    expect(git(mine.repo, "reflog", "-1", "--format=%H", "main")).toBe(mine.next);
    // git keeps no reflog for refs outside refs/heads by default: neither does this.
    expect(existsSync(join(mine.gitDir, "logs/refs/idem"))).toBe(false);
    expect(existsSync(join(theirs.gitDir, "logs/refs/idem"))).toBe(false);
    expect(locks(mine.gitDir)).toEqual([]);
    git(mine.repo, "fsck", "--strict");
  });

  it("refuses a ref that is not where it is expected, moving nothing", async () => {
    sb = sandbox();
    const { repo, gitDir, p, base, next } = setup(sb);
    git(repo, "update-ref", "refs/idem/b/main/w", base);
    const err = await moveRefsInProcess(p, linesFor(base, next), steps).catch((e) => e);
    expect(isIdemError(err, "TARGET_MOVED")).toBe(true);
    expect(err.message).toContain("refs/idem/b/main/w");
    expect(git(repo, "rev-parse", "refs/heads/main")).toBe(base);
    expect(existsSync(join(gitDir, "refs/idem/b/main/k/job%2F0"))).toBe(false);
    expect(locks(gitDir)).toEqual([]);
  });

  it("waits for no one: a lock a human's git holds is LOCKED, and that lock is left alone", async () => {
    sb = sandbox();
    const { repo, gitDir, p, base, next } = setup(sb);
    const theirs = join(gitDir, "refs/idem/b/main/w.lock");
    git(repo, "update-ref", "refs/idem/b/main/k/other", base); // makes the folder
    writeFileSync(theirs, "in progress\n");
    const err = await moveRefsInProcess(p, linesFor(base, next), steps).catch((e) => e);
    expect(isIdemError(err, "LOCKED")).toBe(true);
    expect(readFileSync(theirs, "utf8")).toBe("in progress\n");
    expect(git(repo, "rev-parse", "refs/heads/main")).toBe(base);
    expect(locks(gitDir)).toEqual([theirs]);
    // HEAD.lock too: git locks HEAD to log a move of the branch it points at.
    rmSync(theirs);
    const head = join(gitDir, "HEAD.lock");
    writeFileSync(head, "");
    const err2 = await moveRefsInProcess(p, linesFor(base, next).slice(0, 2), steps).catch(
      (e) => e,
    );
    expect(isIdemError(err2, "LOCKED")).toBe(true);
    expect(existsSync(head)).toBe(true);
    expect(git(repo, "rev-parse", "refs/heads/main")).toBe(base);
  });

  it("moves nothing when the objects could not be made durable", async () => {
    sb = sandbox();
    const { repo, gitDir, p, base, next } = setup(sb);
    const syncObjects = () => Promise.reject(new Error("EIO on an object"));
    const err = await moveRefsInProcess(p, linesFor(base, next), { ...steps, syncObjects }).catch(
      (e) => e,
    );
    expect(err.message).toBe("EIO on an object");
    expect(git(repo, "rev-parse", "refs/heads/main")).toBe(base);
    expect(locks(gitDir)).toEqual([]);
  });

  it("updates a branch git has packed, as a loose ref over the packed one", async () => {
    sb = sandbox();
    const { repo, p, base, next } = setup(sb);
    git(repo, "pack-refs", "--all", "--prune");
    expect(await moveRefsInProcess(p, linesFor(base, next), steps)).toBe(true);
    expect(git(repo, "rev-parse", "refs/heads/main")).toBe(next);
    git(repo, "fsck", "--strict");
  });

  it("leaves to git, changing nothing, what it would not do exactly as git", async () => {
    sb = sandbox();
    const { repo, gitDir, p, base, next } = setup(sb);
    const head = readFileSync(join(gitDir, "logs/HEAD"), "utf8");
    // A delete (the key index's catch-up after a rewrite).
    expect(await moveRefsInProcess(p, [`delete refs/idem/b/main/k/x ${base}`], steps)).toBe(false);
    // A symbolic ref.
    git(repo, "symbolic-ref", "refs/heads/alias", "refs/heads/main");
    expect(await moveRefsInProcess(p, [`update refs/heads/alias ${next} ${base}`], steps)).toBe(
      false,
    );
    // A ref whose folder is a ref (a file) already.
    git(repo, "update-ref", "refs/idem/b/main/k", base);
    expect(await moveRefsInProcess(p, linesFor(base, next), steps)).toBe(false);
    expect(git(repo, "rev-parse", "refs/heads/main")).toBe(base);
    expect(readFileSync(join(gitDir, "logs/HEAD"), "utf8")).toBe(head);
    expect(locks(gitDir)).toEqual([]);
    // A linked worktree keeps its refs elsewhere: nothing is made in its own git folder.
    const wt = join(sb.dir, "wt");
    git(repo, "worktree", "add", "-q", "-b", "side", wt);
    const wtGitDir = git(wt, "rev-parse", "--absolute-git-dir");
    const linked = { ...p, gitDir: wtGitDir, refs: new RefFiles(wtGitDir, 40) };
    const side = git(wt, "rev-parse", "HEAD");
    expect(await moveRefsInProcess(linked, [`update refs/heads/side ${next} ${side}`], steps)).toBe(
      false,
    );
    expect(existsSync(join(wtGitDir, "refs"))).toBe(false);
    expect(existsSync(join(wtGitDir, "HEAD.lock"))).toBe(false);
  });
});
