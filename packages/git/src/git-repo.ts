import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { ProbeHint, ProbeResult } from "@idem/kit";
import { type Clock, FAULT_POINTS, type FaultHook, IdemError, noFault } from "@idem/schema";
import { branchAllowed, isSafeBranchName } from "./branch-names.js";
import { BranchPublisher } from "./branch-publisher.js";
import { BranchQueue, type QueuedCommit } from "./branch-queue.js";
import { recover } from "./crash-recovery.js";
import { checkTreePaths, messageWithTrailer, refComponent, refuse } from "./git-checks.js";
import type { RepoConfig } from "./git-config.js";
import { KeyIndex } from "./key-index.js";
import { type Signature, serializeCommit } from "./plumbing/git-objects.js";
import { type RepoLayout, RepoObjects } from "./plumbing/repo-objects.js";
import { GitError, type GitResult, type RunGitOptions, runGit } from "./plumbing/run-git.js";
import { WorktreeSync } from "./plumbing/worktree-sync.js";
import type { CloneProgress } from "./remote/remote-git.js";
import { RemoteMirror } from "./remote/remote-mirror.js";
import { type PushEntry, RemotePusher } from "./remote/remote-pusher.js";
import { RepoLock } from "./repo-lock.js";

/** A configured repository with the folder idem works in (`path`: its own, or a remote's mirror). */
export type RepoTarget = RepoConfig & { path: string };

/** How the repositories of one host behave (the git kinds' settings). */
export interface GitRepoOptions {
  clock: Clock;
  /**
   * fsync the loose objects idem writes and the refs it moves (`core.fsync=reference`) before
   * apply returns (createEffects' default: true).
   */
  durable: boolean;
  lockTimeoutMs: number;
  lockLingerMs: number;
  /** Folder for this process's temporary index files. */
  tmpDir: () => Promise<string>;
  /** Fault points inside an apply (`interpreter.after-push`); a no-op by default. */
  fault?: FaultHook;
  /** Progress of a first clone of a remote's mirror (for a terminal). */
  onCloneProgress?: (p: CloneProgress) => void;
}

/** One effect commit to build on the probed tip and publish onto its branch. */
export interface EffectCommit {
  branch: string;
  /** The probed head the branch must still be at (null: create the branch). */
  base: string | null;
  /** The commit's root tree, already written. */
  tree: string;
  /** The agent's message; the `Idem-Effect: <key>` trailer is appended. */
  message: string;
  key: string;
  /** Every path the commit changes (the checked-out working tree follows them). */
  paths: string[];
}

/**
 * One configured repository, as the git effects use it: key probes that stay cheap in history
 * length, one lock between processes, and one call that builds an effect's commit on the probed
 * tip and publishes it by compare-and-swap. The in-process plumbing it stands on (objects,
 * cat-file, index, ref updater, worktree sync) is reachable through `objects` and `worktree`.
 */
export class GitRepo {
  /** The object database in process: trees, commits, blobs, the cat-file process. */
  readonly objects: RepoObjects;
  /** The checked-out working tree's in-process sync and the config that rules it out. */
  readonly worktree: WorktreeSync;
  private readonly lock: RepoLock;
  private readonly keys: KeyIndex;
  private readonly publisher: BranchPublisher;
  private readonly branchOk = new Map<string, Promise<void>>();
  /** A remote's mirror (`repos.<alias>.url`); undefined for a repository on this host. */
  readonly mirror: RemoteMirror | undefined;
  private readonly pushers = new Map<string, RemotePusher>();
  private readonly queues = new Map<string, BranchQueue>();

  constructor(
    readonly alias: string,
    readonly config: RepoTarget,
    readonly options: GitRepoOptions,
  ) {
    // A mirror's durability is the server's: the remote, not the mirror, holds what was applied.
    const durable = config.url ? false : options.durable;
    this.objects = new RepoObjects(alias, config.path, durable);
    this.worktree = new WorktreeSync(this.objects);
    this.lock = new RepoLock(alias, config.path, { ...options, durable });
    this.keys = new KeyIndex(this.objects);
    this.publisher = new BranchPublisher(this.objects, this.keys, this.worktree, this.lock);
    this.mirror = config.url
      ? new RemoteMirror(alias, config.url, config.path, {
          objects: this.objects,
          keys: this.keys,
          lock: this.lock,
          withLock: (fn) => this.withLock(fn),
          fault: options.fault ?? noFault,
          onCloneProgress: options.onCloneProgress,
        })
      : undefined;
  }

  /**
   * Resolves the repository layout once (a remote's mirror is cloned first when missing).
   * @throws IdemError TARGET_MISSING when it is not a repo; UNAVAILABLE when the remote is not.
   */
  async layout(): Promise<RepoLayout> {
    await this.mirror?.ensure();
    const layout = await this.objects.layout();
    this.lock.attach(layout.gitDir);
    return layout;
  }

  /**
   * Checks a branch at the target: allowed by the repo's config, a safe name, and accepted by
   * `git check-ref-format --branch` (remembered per branch).
   * @throws IdemError SANDBOX_VIOLATION otherwise.
   */
  async checkBranch(branch: string): Promise<void> {
    if (!branchAllowed(this.config, branch)) {
      refuse("branch", `"${branch}" is not allowed for repo "${this.alias}"`);
    }
    if (branch.startsWith("-") || !isSafeBranchName(branch))
      refuse("branch", `"${branch}" is not a safe branch name`);
    let p = this.branchOk.get(branch);
    if (!p) {
      if (this.mirror) await this.layout();
      p = runGit(this.config.path, ["check-ref-format", "--branch", branch]).then(
        () => undefined,
        (e) => {
          this.branchOk.delete(branch);
          if (e instanceof GitError)
            refuse("branch", `"${branch}" is rejected by git check-ref-format`);
          throw e;
        },
      );
      this.branchOk.set(branch, p);
    }
    await p;
  }

  /** The commit a branch points at, or null. @throws IdemError TARGET_CONFLICT for a non-commit. */
  async head(branch: string): Promise<string | null> {
    await this.layout();
    return this.objects.head(branch);
  }

  /**
   * Where the effect `key` stands on `branch`: present with its commit, or absent with the probed
   * head as `detail.base` (what apply moves the branch from). Never writes; bounded in history
   * (see `KeyIndex.lookupKey`; `hint.base` bounds the scan after a crash).
   * @throws IdemError TARGET_MISSING when the branch does not exist in a repo that has branches.
   */
  async probeKey(
    branch: string,
    key: string,
    hint?: ProbeHint,
    from?: string,
  ): Promise<ProbeResult> {
    await this.layout();
    const mirror = this.mirror;
    if (!mirror) return this.probeHere(branch, key, hint);
    return mirror.probe(branch, async () => {
      if ((await mirror.refresh(branch, from !== undefined)) !== null)
        return this.probeHere(branch, key, hint);
      if (from === undefined) return { status: "absent", detail: { base: null } };
      // A new branch, to start from `from`'s tip on the remote (the apply creates it there).
      const start = await mirror.refresh(from);
      if (start === null)
        throw new IdemError("TARGET_MISSING", `repo "${this.alias}" has no branch "${from}"`);
      return { status: "absent", detail: { base: null, from: start } };
    });
  }

  /**
   * Creates `branch` on the remote at `commit` (a commit the remote has: the tip of the branch
   * it starts from), unless it exists by now; then brings the mirror to it.
   * @throws IdemError UNAVAILABLE (the push's outcome unknown: probe again), TARGET_CONFLICT.
   */
  async createRemoteBranch(branch: string, commit: string): Promise<void> {
    const mirror = this.mirror;
    if (!mirror) throw new IdemError("INVALID_STATE", `repo "${this.alias}" is not a remote`);
    if ((await mirror.remote.push(branch, commit, null)) === "pushed") mirror.pushed(branch);
    await mirror.refresh(branch);
  }

  /** The key on the branch as this repository (or the mirror, brought to the remote tip) has it. */
  private async probeHere(branch: string, key: string, hint?: ProbeHint): Promise<ProbeResult> {
    // The hint is what an earlier probe of this effect stored: the head it probed.
    const base = typeof hint?.base === "string" ? hint.base : undefined;
    const found = await this.keys.lookupKey(branch, key, base);
    if (found.found) return { status: "present", detail: { commit: found.commit } };
    if (found.head === null && !(await this.isEmpty())) {
      throw new IdemError("TARGET_MISSING", `repo "${this.alias}" has no branch "${branch}"`);
    }
    return { status: "absent", detail: { base: found.head } };
  }

  /** Many keys on one branch at `head` at once (replay): key -> commit for those present. */
  lookupKeys(branch: string, head: string, keys: string[]): Promise<Map<string, string>> {
    return this.keys.lookupKeys(branch, head, keys);
  }

  /**
   * For audit: every `Idem-Effect` key reachable from `branch` and its commits, in one scan; a
   * commit a later one reverts (`git revert`, not reverted again) is left out, so reverting one
   * copy of a duplicate clears it (reverting the only copy leaves the key absent: drift).
   * @throws IdemError SANDBOX_VIOLATION for a branch that is not allowed.
   */
  async trailers(branch: string): Promise<Map<string, string[]>> {
    await this.checkBranch(branch);
    await this.syncRemote(branch);
    const head = await this.head(branch);
    if (head === null) return new Map();
    const [keys, reverted] = await Promise.all([
      this.keys.scanRange([head]),
      this.keys.revertedIn([head]),
    ]);
    if (reverted.size === 0) return keys;
    for (const [key, commits] of keys) {
      const kept = commits.filter((c) => !reverted.has(c));
      if (kept.length === 0) keys.delete(key);
      else keys.set(key, kept);
    }
    return keys;
  }

  /**
   * For a remote: brings the mirror's branch to the remote's tip (one ls-remote, a fetch only when
   * it moved). A no-op for a repository on this host.
   * @throws IdemError UNAVAILABLE, TARGET_MISSING
   */
  async syncRemote(branch: string, missingOk = false): Promise<void> {
    if (this.mirror) {
      await this.layout();
      await this.mirror.refresh(branch, missingOk);
    }
  }

  /**
   * A remote's apply: the effect's commit is built on the mirror's tip together with the effects
   * waiting at the same time and pushed by compare-and-swap (`RemotePusher`); answers
   * `{ commit, base }` once the remote holds it; `order` keeps it behind another run's push.
   * @throws IdemError TARGET_MOVED, UNAVAILABLE (the push's outcome is unknown: probe again),
   * ORDER_BLOCKED (`order.after` failed: nothing pushed).
   */
  pushEffect(
    branch: string,
    effect: Omit<PushEntry, "commitBody"> & { message: string },
  ): Promise<Record<string, unknown>> {
    const mirror = this.mirror;
    if (!mirror) throw new IdemError("INVALID_STATE", `repo "${this.alias}" is not a remote`);
    this.mover();
    let pusher = this.pushers.get(branch);
    if (!pusher) {
      pusher = new RemotePusher(branch, mirror, {
        objects: this.objects,
        keys: this.keys,
        lock: this.lock,
        withLock: (fn) => this.withLock(fn),
        fault: this.options.fault ?? noFault,
      });
      this.pushers.set(branch, pusher);
    }
    const message = messageWithTrailer(effect.message, effect.key);
    return pusher.push({
      key: effect.key,
      base: effect.base,
      paths: effect.paths,
      tree: effect.tree,
      order: effect.order,
      commitBody: (tree, parent) =>
        serializeCommit(tree, parent ? [parent] : [], this.mover(), message),
    });
  }

  /** True when the repo has no branch at all (a fresh `git init`): only then may idem create one. */
  private async isEmpty(): Promise<boolean> {
    const out = await runGit(this.config.path, [
      "for-each-ref",
      "--count=1",
      "--format=%(refname)",
      "refs/heads/",
    ]);
    return out.stdout.length === 0;
  }

  /**
   * Refuses paths that pass through a symlink, file or submodule of `tree` (git would write beyond a
   * symbolic link in a working tree).
   * @throws IdemError SANDBOX_VIOLATION
   */
  checkTreePaths(tree: string | null, paths: string[]): Promise<void> {
    return checkTreePaths(this.objects, tree, paths);
  }

  /**
   * Runs `fn` holding idem's lock on this repository (between processes and inside this one), after
   * recovering whatever a killed holder left behind.
   * @throws IdemError LOCKED when another process holds it too long; INTEGRITY for an unreadable
   * crash marker.
   */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    await this.layout();
    const release = await this.lock.acquire();
    try {
      await recover({
        objects: this.objects,
        worktree: this.worktree,
        lock: this.lock,
        publisher: this.publisher,
      });
      return await fn();
    } finally {
      await release();
    }
  }

  /**
   * Builds the effect's commit on `base` (author and committer from the repo config, the
   * `Idem-Effect: <key>` trailer last) and publishes it onto the branch in one ref transaction:
   * compare-and-swap from `base`, the key's index ref and the watermark together; a checked-out
   * branch has its index and working tree brought along. Call under `withLock`. Safe to retry
   * after a crash at any point: the next holder's recovery finishes or undoes it, and a probe then
   * answers present or absent.
   * @throws IdemError TARGET_MOVED (the branch left `base`), DIRTY_WORKTREE (nothing moved), LOCKED,
   * SANDBOX_VIOLATION (an author the config should not hold).
   */
  async commitOnto(effect: EffectCommit): Promise<string> {
    const { branch, base, key } = effect;
    const sync = (await this.publisher.checkedOutBranch()) === branch;
    const mover = this.mover();
    const body = serializeCommit(
      effect.tree,
      base ? [base] : [],
      mover,
      messageWithTrailer(effect.message, key),
    );
    const commit = await this.objects.writeObject("commit", body);
    // Durable: every object of the effect is on disk before a ref points at it (the publisher
    // fsyncs them with the refs' lock files).
    await this.publisher.publish(
      { branch, base, commits: [{ commit, key }], sync, paths: effect.paths, mover },
      () => this.objects.syncObjects(),
      () => this.options.fault?.(FAULT_POINTS.INTERPRETER_AFTER_BRANCH_MOVE),
    );
    return commit;
  }

  /**
   * A local branch's apply (group commit, `BranchQueue`): built on the head with the effects
   * waiting at once, published with them in one durable step; answers `{ commit, base }` then.
   * @throws IdemError TARGET_MOVED, DIRTY_WORKTREE, LOCKED, ORDER_BLOCKED, SANDBOX_VIOLATION.
   */
  queueCommit(branch: string, effect: QueuedCommit): Promise<Record<string, unknown>> {
    if (this.mirror) throw new IdemError("INVALID_STATE", `repo "${this.alias}" is a remote`);
    this.mover();
    let queue = this.queues.get(branch);
    if (!queue) {
      const { objects, publisher } = this;
      const [withLock, mover] = [this.withLock.bind(this), this.mover.bind(this)];
      const fault = this.options.fault ?? noFault;
      queue = new BranchQueue(this.alias, branch, { objects, publisher, withLock, mover, fault });
      this.queues.set(branch, queue);
    }
    return queue.commit({ ...effect, message: messageWithTrailer(effect.message, effect.key) });
  }

  /** The repo config's author at the clock's now. @throws IdemError SANDBOX_VIOLATION */
  private mover(): Signature {
    const { name, email } = this.config.author;
    if (/[<>\n\0]/.test(name + email))
      refuse("author", "of the repo config may not contain <, >, NUL or a line break");
    return { name, email, at: this.options.clock.now() };
  }

  /** git under idem's repo lock: the child inherits the lock (see RunGitOptions.lockFd). */
  lockedGit(args: readonly string[], options: RunGitOptions = {}): Promise<GitResult> {
    return this.lock.git(args, options);
  }

  /** A fresh temporary index file path in this process's scratch folder. */
  async tempIndex(tag: string): Promise<string> {
    return join(
      await this.options.tmpDir(),
      `${refComponent(this.alias)}-${tag}-${randomBytes(4).toString("hex")}.index`,
    );
  }

  /** The index file apply uses (shared between idem processes under the repo lock). */
  async applyIndex(): Promise<string> {
    const { gitDir } = await this.layout();
    return join(gitDir, "idem", "apply.index");
  }

  /** Ends the cat-file and update-ref processes and drops the lock. */
  close(): void {
    this.objects.close();
    this.lock.close();
  }
}
