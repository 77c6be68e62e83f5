import { runGit } from "./run-git.js";

/**
 * Packs one repository's batches write before they are rolled up: git's own `gc.autoPackLimit` is
 * 50, and idem runs its git with automatic maintenance off.
 */
export const PACKS_BEFORE_ROLLUP = 32;

/**
 * Keeps the packs a local branch's batches write (one each) from piling up: every
 * PACKS_BEFORE_ROLLUP packs, one `git repack -d --geometric=2` in the background (one at a time),
 * which rolls the small packs (and any loose objects) into larger ones, as `git maintenance`'s
 * incremental repack does. A lookup in a repository of thousands of small packs would otherwise
 * search each pack's index. Safe beside idem's own writes: git deletes only the packs it rolled
 * up, after its new pack is written and fsynced (`core.fsync=pack,pack-metadata`), and a pack a
 * batch has not fsynced yet that git rolled up is gone from `syncObjects`' list by then (a file
 * gone is skipped: its objects are in git's fsynced pack). A roll-up that fails changes nothing.
 */
export class PackRollup {
  private written = 0;
  private running: Promise<void> | undefined;

  constructor(private readonly path: string) {}

  /** Counts a pack written, and starts a roll-up when it is due and none runs. */
  wrote(): void {
    this.written += 1;
    if (this.written % PACKS_BEFORE_ROLLUP !== 0 || this.running !== undefined) return;
    this.running = runGit(this.path, [
      "-c",
      "core.fsync=pack,pack-metadata",
      "-c",
      "core.fsyncMethod=fsync",
      "repack",
      "-d",
      "-q",
      "--geometric=2",
      "--no-write-bitmap-index",
    ]).then(
      () => {
        this.running = undefined;
      },
      () => {
        this.running = undefined;
      },
    );
  }

  /** Resolves once the roll-up under way, if any, has ended. */
  async idle(): Promise<void> {
    await this.running;
  }
}
