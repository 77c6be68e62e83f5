import { existsSync } from "node:fs";
import { join } from "node:path";
import { type FaultHook, IdemError } from "@idem/schema";
import { refComponent } from "../git-checks.js";
import type { KeyIndex } from "../key-index.js";
import type { RepoObjects } from "../plumbing/repo-objects.js";
import type { RepoLock } from "../repo-lock.js";
import { type CloneProgress, RemoteGit } from "./remote-git.js";

/** What the mirror of one remote works with: the repository parts of its `GitRepo`. */
export interface MirrorParts {
  objects: RepoObjects;
  keys: KeyIndex;
  lock: RepoLock;
  /** Runs `fn` under idem's lock on the mirror (recovery first). */
  withLock<T>(fn: () => Promise<T>): Promise<T>;
  fault: FaultHook;
  onCloneProgress?: ((p: CloneProgress) => void) | undefined;
}

/** Where a fetched branch lands before the mirror's branch is reset to it. */
function fetchedRef(branch: string): string {
  return `refs/idem/fetched/${refComponent(branch)}`;
}

/**
 * One host's mirror of a remote repository (`repos.<alias>.url`): a bare repository in `cacheDir`,
 * made on first use, whose branches follow the remote. idem builds commits in it and pushes them by
 * compare-and-swap; the mirror's branch only ever points at a commit the remote holds (it moves
 * after a push succeeded, or to the remote's tip when a probe finds the remote moved), so a commit
 * built and never pushed stays an unreferenced object and the next probe resets the branch to the
 * remote's tip.
 */
export class RemoteMirror {
  readonly remote: RemoteGit;
  private made: Promise<void> | undefined;
  private readonly asking = new Map<string, { tip: Promise<string | null>; pushes: number }>();
  /** Pushes of this process per branch: an ls-remote begun before one may answer a stale tip. */
  private readonly pushes = new Map<string, number>();

  constructor(
    alias: string,
    url: string,
    readonly dir: string,
    private readonly parts: MirrorParts,
  ) {
    this.remote = new RemoteGit(alias, url, dir);
  }

  /** Makes the mirror when it is missing (a bare clone, progress shown by the caller's hook). */
  ensure(): Promise<void> {
    if (!this.made) {
      this.made = existsSync(join(this.dir, "HEAD"))
        ? Promise.resolve()
        : this.remote.cloneMirror(this.parts.onCloneProgress);
      this.made.catch(() => {
        this.made = undefined;
      });
    }
    return this.made;
  }

  /**
   * The remote's tip of `branch`: one ls-remote, shared by the probes that ask meanwhile, with the
   * count of this process's pushes when it began.
   */
  private ask(branch: string): { tip: Promise<string | null>; pushes: number } {
    let a = this.asking.get(branch);
    if (!a) {
      a = {
        tip: this.remote.tip(branch).finally(() => this.asking.delete(branch)),
        pushes: this.pushes.get(branch) ?? 0,
      };
      this.asking.set(branch, a);
    }
    return a;
  }

  private readonly probing = new Map<string, { n: number; idle: (() => void)[] }>();

  /** Runs a probe of `branch`, counted, so that a push about to start can wait for its apply. */
  async probe<T>(branch: string, fn: () => Promise<T>): Promise<T> {
    let p = this.probing.get(branch);
    if (!p) {
      p = { n: 0, idle: [] };
      this.probing.set(branch, p);
    }
    p.n += 1;
    try {
      return await fn();
    } finally {
      p.n -= 1;
      if (p.n === 0) for (const done of p.idle.splice(0)) done();
    }
  }

  /**
   * Waits until no probe of `branch` is running (at most `maxMs`), then one turn of the event loop
   * so their applies can queue: a push then carries the effects probed with the one that started it.
   * Answers at once when none is running.
   */
  async quiet(branch: string, maxMs: number): Promise<void> {
    const p = this.probing.get(branch);
    if (!p || p.n === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      p.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    await new Promise((r) => setTimeout(r, 1));
  }

  /** Called by the pusher once a push of `branch` succeeded, before the mirror moves. */
  pushed(branch: string): void {
    this.pushes.set(branch, (this.pushes.get(branch) ?? 0) + 1);
  }

  /**
   * Brings the mirror's branch to the remote's tip and answers it: one ls-remote, and a fetch only
   * when the tip is a commit the mirror does not hold. A remote without the branch answers null
   * (TARGET_MISSING when the remote has other branches, unless `missingOk`: idem creates a branch
   * only in an empty repository, or from another branch a git.commit names in `from`).
   * @throws IdemError UNAVAILABLE, TARGET_MISSING
   */
  async refresh(branch: string, missingOk = false): Promise<string | null> {
    await this.ensure();
    const asked = this.ask(branch);
    const tip = await asked.tip;
    if (tip === null) {
      if (!missingOk && (await this.remote.hasBranches()))
        throw new IdemError(
          "TARGET_MISSING",
          `repo "${this.remote.alias}": the remote ${this.remote.shownUrl} has no branch "${branch}"`,
        );
      return null;
    }
    const { objects } = this.parts;
    if ((await objects.head(branch)) === tip) return tip;
    return this.parts.withLock(async () => {
      // This process pushed since the ls-remote began: its answer may predate that push, and the
      // mirror (moved after the push) is the newer truth; the apply's compare-and-swap checks it.
      if ((this.pushes.get(branch) ?? 0) !== asked.pushes) return objects.head(branch);
      return this.resetTo(branch, tip);
    });
  }

  /** Under the lock: the mirror's branch to `tip` (fetched first when missing); answers the tip. */
  private async resetTo(branch: string, tip: string | null): Promise<string | null> {
    const { objects, lock } = this.parts;
    let to = tip;
    if (to === null || !(await objects.catFile.resolve(to))) {
      to = await this.remote.fetch(branch, fetchedRef(branch));
    }
    const local = await objects.head(branch);
    if (to === local) return to;
    // Forced: the remote is the truth; an orphan commit the mirror may point at is dropped.
    await lock.updateRefs([
      to === null ? `delete refs/heads/${branch}` : `update refs/heads/${branch} ${to}`,
    ]);
    return to;
  }

  /** Under the lock, after a rejected push: fetch the branch and reset the mirror to it. */
  async fetchAfterRejection(branch: string): Promise<string | null> {
    return this.resetTo(branch, null);
  }
}
