import { randomBytes } from "node:crypto";
import { promises as fs, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { IdemError } from "@idem/schema";
import { refuse } from "./git-checks.js";
import { type KeyIndex, keyRef, watermarkRef } from "./key-index.js";
import { markerPath, type PendingMarker, writeMarker } from "./pending-marker.js";
import type { Signature } from "./plumbing/git-objects.js";
import type { PreparedSync } from "./plumbing/prepared-sync.js";
import { moveRefsInProcess } from "./plumbing/ref-transaction.js";
import type { RepoObjects } from "./plumbing/repo-objects.js";
import { GitError, runGit } from "./plumbing/run-git.js";
import type { WorktreeSync } from "./plumbing/worktree-sync.js";
import type { RepoLock } from "./repo-lock.js";

/** One effect's commit in a branch move, indexed under its key. */
export interface MovedCommit {
  commit: string;
  key: string;
}

/**
 * One branch move: `commits`, each on the previous and the first on `base`, each indexed under its
 * key; the last becomes the head (a batch of effects queued at once, or one).
 */
export interface BranchMove {
  branch: string;
  base: string | null;
  commits: MovedCommit[];
  /** The branch is checked out: its index and working tree follow. */
  sync: boolean;
  /** Every path the commits change. */
  paths: string[];
  /** Who moves it, and when: the reflog's line. */
  mover: Signature;
}

/**
 * Moves branches for effects under idem's repo lock: one compare-and-swap ref transaction that
 * also keeps the key index, with a checked-out working tree brought along, and the crash marker
 * that lets the next holder finish what a killed one left (`recover`, in pending-marker's terms).
 */
export class BranchPublisher {
  constructor(
    private readonly objects: RepoObjects,
    private readonly keys: KeyIndex,
    private readonly worktree: WorktreeSync,
    private readonly lock: RepoLock,
  ) {}

  /**
   * The branch checked out in the main working tree, or null (bare repo or detached HEAD).
   * @throws the read error of an unreadable HEAD (it must not pass for "nothing checked out").
   */
  async checkedOutBranch(): Promise<string | null> {
    const { gitDir, bare } = await this.objects.layout();
    if (bare) return null;
    const head = readFileSync(join(gitDir, "HEAD"), "utf8");
    const m = /^ref: refs\/heads\/(.+)\n?$/.exec(head);
    return m ? (m[1] as string) : null;
  }

  /**
   * Two-way merge of the index and working tree from `from` to `to`, as `git checkout` does:
   * with the index refreshed first, as checkout does, since read-tree trusts stat data alone and
   * takes an entry git smudged as racily clean (or left without stat data) for a changed file.
   */
  async syncWorktree(from: string | null, to: string): Promise<void> {
    const args =
      from === null ? ["read-tree", "-m", "-u", to] : ["read-tree", "-m", "-u", from, to];
    // Best effort: a refresh git cannot do (index.lock held) leaves read-tree to say why.
    await this.lock.git(["update-index", "-q", "--refresh"], { okCodes: [1, 128] });
    await this.lock.git(args);
  }

  /**
   * Makes the last of `move.commits` the branch head with compare-and-swap from `move.base`, and
   * indexes every commit's key at that commit in the same transaction (one durable step for a
   * batch: one fsync of all objects and lock files, one crash marker naming the whole move). A
   * checked-out branch (`sync`) has its index and working tree brought along for `paths`, from
   * base's tree to the last commit's: checked first and written in process when it can
   * (WorktreeSync), else checked with `git status` and moved with `read-tree -m -u`; if git then
   * refuses, the branch is moved back and DIRTY_WORKTREE thrown. The checks refuse what moving the
   * commits one at a time would refuse for any of them, and then nothing moves.
   * `syncObjects`: the fsync of the commits' objects, run with the refs' own before any ref moves.
   * `afterMove`: called once the refs moved, before the working tree follows (a fault point).
   * @throws IdemError DIRTY_WORKTREE with nothing moved; TARGET_MOVED; LOCKED; the fsync's error
   * with nothing moved.
   */
  async publish(
    move: BranchMove,
    syncObjects: () => Promise<void>,
    afterMove: () => void = () => {},
  ): Promise<void> {
    const { branch, base, commits, sync, paths } = move;
    const last = commits.at(-1);
    if (!last) return;
    const commit = last.commit;
    const { gitDir } = await this.objects.layout();
    const pending = markerPath(gitDir);
    const branchRef = `refs/heads/${branch}`;
    const keyRefs = new Set(commits.map((c) => keyRef(branch, c.key)));
    const lines = [
      base === null ? `create ${branchRef} ${commit}` : `update ${branchRef} ${commit} ${base}`,
      ...commits.map((c) => `update ${keyRef(branch, c.key)} ${c.commit}`),
      // The batch's own keys are set above (a catch-up line of one of them would name it twice).
      ...(await this.keys.catchUpLines(branch, base, commit, last.key)).filter(
        (l) => !keyRefs.has(l.split(" ")[1] as string),
      ),
    ];
    const refs = lines.map((l) => l.split(" ")[1] as string);
    const nonce = randomBytes(6).toString("hex");
    const marker: PendingMarker = { branch, base, commit, refs, sync, paths, nonce };
    mkdirSync(join(gitDir, "idem"), { recursive: true });
    let fast: PreparedSync | undefined;
    if (sync && base !== null) {
      const baseTree = (await this.objects.commit(base))?.tree;
      const newTree = (await this.objects.commit(commit))?.tree;
      if (baseTree && newTree) {
        // Written before git's index.lock is taken, so the next holder can clean up after a crash.
        writeMarker(gitDir, marker);
        try {
          // A path a batch changes and changes back is not one the in-process sync looks at: git
          // status checks it as a commit of its own would have been checked.
          if (commits.length > 1 && (await this.roundTrips(baseTree, newTree, paths)))
            await this.checkWorktree(paths, baseTree);
          const r = await this.worktree.prepare(baseTree, newTree, paths, false);
          if (r.kind === "ready") fast = r.sync;
        } catch (e) {
          await fs.rm(pending, { force: true });
          throw e;
        }
      }
    }
    if (sync && !fast) {
      // A marker the in-process sync wrote before it handed over to git goes with a refusal.
      await this.checkWorktree(paths, await this.objects.treeOf(base)).catch(async (e) => {
        await fs.rm(pending, { force: true });
        throw e;
      });
    }
    // The in-process sync wrote it already; nothing it names has changed since.
    if (!fast) writeMarker(gitDir, marker);
    try {
      const inProcess = await this.objects.inProcessRefs();
      // The working tree's new files and index are written (not in place) before the fsyncs.
      const stage = async () => fast?.stage(nonce);
      const moved =
        inProcess !== undefined &&
        (await moveRefsInProcess(inProcess, lines, { syncObjects, stage, mover: move.mover }));
      if (!moved) {
        await stage();
        await syncObjects();
        await this.lock.updateRefs(lines);
      }
    } catch (e) {
      await fast?.abort();
      await fs.rm(pending, { force: true });
      throw e;
    }
    afterMove();
    if (fast) {
      // The effect is committed: a failure here is finished by the next holder's recover().
      await fast.commit(nonce);
      rmSync(pending, { force: true });
      return;
    } else if (sync) {
      try {
        await this.syncWorktree(base, commit);
      } catch (e) {
        if (!(e instanceof GitError)) throw e;
        await this.moveBack(move, e);
      }
    }
    await fs.rm(pending, { force: true });
  }

  /**
   * git's sync refused after the refs moved: the branch, its key refs and the watermark go back
   * to `base` (every key ref of the branch is at or below it) and the marker goes.
   * @throws IdemError LOCKED (another git command holds the index), else DIRTY_WORKTREE.
   */
  private async moveBack(move: BranchMove, e: GitError): Promise<never> {
    const { branch, base, commits } = move;
    const commit = commits.at(-1)?.commit as string;
    const branchRef = `refs/heads/${branch}`;
    const { gitDir } = await this.objects.layout();
    await this.lock
      .updateRefs([
        base === null ? `delete ${branchRef} ${commit}` : `update ${branchRef} ${base} ${commit}`,
        ...commits.map((c) => `delete ${keyRef(branch, c.key)} ${c.commit}`),
        base === null
          ? `delete ${watermarkRef(branch)} ${commit}`
          : `update ${watermarkRef(branch)} ${base} ${commit}`,
      ])
      .catch(() => {});
    await fs.rm(markerPath(gitDir), { force: true });
    const stderr = e.result.stderr.trim();
    // Another git command (a human's, or one a killed idem left running) holds the index: a
    // wait, not a conflict a human must resolve.
    if (/index\.lock': File exists|Unable to create .*index\.lock/i.test(stderr)) {
      throw new IdemError(
        "LOCKED",
        `repo "${this.objects.alias}": the index is locked by another git command, nothing was changed: ${stderr}`,
        { cause: e },
      );
    }
    throw new IdemError(
      "DIRTY_WORKTREE",
      `repo "${this.objects.alias}": the working tree could not follow the commit, nothing was changed: ${stderr}`,
      { cause: e },
    );
  }

  /** True when one of `paths` is the same in both trees (a batch changed it and back). */
  private async roundTrips(baseTree: string, newTree: string, paths: string[]): Promise<boolean> {
    for (const p of paths) {
      const [a, b] = await Promise.all([
        this.objects.entryAt(baseTree, p),
        this.objects.entryAt(newTree, p),
      ]);
      if (a?.oid === b?.oid && a?.mode === b?.mode) return true;
    }
    return false;
  }

  /**
   * Refuses before anything moves when the human's working tree would be swept in or overwritten:
   * any staged change, an unstaged change to one of `paths`, an untracked file where the effect
   * creates one, or a path through a symlink in the working tree.
   * @throws IdemError DIRTY_WORKTREE; SANDBOX_VIOLATION for a symlink on the way.
   */
  private async checkWorktree(paths: string[], baseTree: string | null): Promise<void> {
    const { workTree } = await this.objects.layout();
    if (!workTree) return;
    const alias = this.objects.alias;
    // --no-optional-locks: a check must not take (and, killed, leave) the index lock git status
    // otherwise takes to refresh the index.
    const st = await runGit(workTree, [
      "--no-optional-locks",
      "status",
      "--porcelain=v1",
      "-z",
      "--untracked-files=no",
      "--no-renames",
    ]);
    const wanted = new Set(paths);
    const entries = st.stdout.toString("utf8").split("\0").filter(Boolean);
    for (const e of entries) {
      const x = e[0];
      const y = e[1];
      const p = e.slice(3);
      if (x !== " " && x !== "?" && x !== "!") {
        throw new IdemError(
          "DIRTY_WORKTREE",
          `repo "${alias}" has staged changes (${p}); commit or unstage them first`,
          { details: { path: p } },
        );
      }
      if (y !== " " && wanted.has(p)) {
        throw new IdemError(
          "DIRTY_WORKTREE",
          `repo "${alias}": ${p} has uncommitted changes the effect would overwrite`,
          { details: { path: p } },
        );
      }
    }
    for (const p of paths) {
      const parts = p.split("/");
      for (let i = 1; i <= parts.length; i++) {
        const sub = parts.slice(0, i).join("/");
        const st2 = await fs.lstat(join(workTree, sub)).catch((e: NodeJS.ErrnoException) => {
          // Absent from here on: nothing to pass through. Any other error must not skip the check.
          if (e.code === "ENOENT" || e.code === "ENOTDIR") return undefined;
          throw e;
        });
        if (!st2) break;
        if (st2.isSymbolicLink() && i < parts.length) {
          refuse("path", `"${p}" passes through the symlink ${sub} in the working tree`);
        }
        if (i === parts.length && !(await this.objects.entryAt(baseTree, p))) {
          throw new IdemError("DIRTY_WORKTREE", `repo "${alias}": untracked ${p} is in the way`, {
            details: { path: p },
          });
        }
      }
    }
  }
}
