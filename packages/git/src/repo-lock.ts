import { join } from "node:path";
import { FileLock } from "@idem/runtime";
import { IdemError } from "@idem/schema";
import { RefUpdater } from "./plumbing/ref-updater.js";
import { GitError, type GitResult, type RunGitOptions, runGit } from "./plumbing/run-git.js";

/** Timeouts and durability of a repository lock. */
export interface RepoLockOptions {
  durable: boolean;
  lockTimeoutMs: number;
  lockLingerMs: number;
}

/**
 * idem's lock on one repository (`<gitdir>/idem/lock`) and the git children that work under it:
 * they inherit the lock's descriptor, so a child orphaned by a killed idem keeps the lock until it
 * exits. The long-lived `git update-ref --stdin` lives exactly as long as the OS lock.
 */
export class RepoLock {
  private lock: FileLock | undefined;
  private updater: RefUpdater | undefined;

  constructor(
    private readonly alias: string,
    private readonly path: string,
    private readonly options: RepoLockOptions,
  ) {}

  /** Places the lock in `gitDir` (once the layout is known; later calls keep the first). */
  attach(gitDir: string): void {
    this.lock ??= new FileLock(join(gitDir, "idem", "lock"), {
      timeoutMs: this.options.lockTimeoutMs,
      lingerMs: this.options.lockLingerMs,
      beforeUnlock: () => {
        // The updater holds the lock's descriptor: it must go for the lock to be released.
        this.updater?.close();
        this.updater = undefined;
      },
    });
  }

  /**
   * Takes the lock (between processes and inside this one) and answers its release.
   * @throws IdemError LOCKED when another process holds it too long; INVALID_STATE before `attach`.
   */
  async acquire(): Promise<() => Promise<void>> {
    if (!this.lock) throw new IdemError("INVALID_STATE", "the repo lock is not placed yet");
    return this.lock.acquire();
  }

  /** git under idem's repo lock: the child inherits the lock (see RunGitOptions.lockFd). */
  git(args: readonly string[], options: RunGitOptions = {}): Promise<GitResult> {
    return runGit(this.path, args, { ...options, lockFd: this.lock?.fd });
  }

  /**
   * Moves refs in one transaction (`start` ... `prepare`, `commit` on the long-lived
   * `git update-ref --stdin` that holds the repo lock), compare-and-swap on the old values given.
   * Without the lock held, one `git update-ref --stdin` process does it.
   * @throws IdemError TARGET_MOVED when a ref is not where the transaction expects it; LOCKED when a
   * git lock file is held by another process; IO for any other refusal.
   */
  async updateRefs(lines: string[]): Promise<void> {
    try {
      const fd = this.lock?.fd;
      if (fd === undefined) {
        const pre = this.options.durable
          ? ["-c", "core.fsync=reference", "-c", "core.fsyncMethod=fsync"]
          : [];
        await runGit(this.path, [...pre, "update-ref", "--stdin"], {
          input: `${lines.join("\n")}\n`,
        });
        return;
      }
      this.updater ??= new RefUpdater(this.path, fd, this.options.durable);
      await this.updater.run(lines);
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      const err = e.result.stderr;
      if (/File exists|Unable to create .*\.lock/i.test(err)) {
        throw new IdemError(
          "LOCKED",
          `repo "${this.alias}": a git lock file is held: ${err.trim()}`,
          { cause: e },
        );
      }
      if (
        /is at .* but expected|reference already exists|unable to resolve reference|cannot lock ref/i.test(
          err,
        )
      ) {
        throw new IdemError(
          "TARGET_MOVED",
          `repo "${this.alias}": the branch moved: ${err.trim()}`,
          { cause: e },
        );
      }
      throw new IdemError("IO", `repo "${this.alias}": update-ref failed: ${err.trim()}`, {
        cause: e,
      });
    }
  }

  /** Ends the updater and drops the lock. */
  close(): void {
    this.updater?.close();
    this.updater = undefined;
    void this.lock?.close();
  }
}
