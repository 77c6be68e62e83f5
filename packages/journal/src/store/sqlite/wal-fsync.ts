import { closeSync, fdatasync, fdatasyncSync, openSync } from "node:fs";
import { IdemError } from "@idem/schema";
import type { SqliteJournalOptions } from "./sqlite-options.js";

/** A claim or note committed this recently marks the store as serving a pipeline (see `durable`). */
const PIPELINE_WINDOW_MS = 10;

/**
 * The longest a `soon` commit waits for a durable write to carry it to disk before it gets an
 * fsync of its own (see `soon`): the window a power loss may take it in.
 */
export const SOON_MS = 100;

const fsyncFailed = (err: NodeJS.ErrnoException) =>
  new IdemError(
    "IO",
    `the journal's fsync failed (${err.code ?? err.message}): writes since the last good fsync may not be durable; restart this process`,
    { cause: err },
  );

/**
 * The group fsync of one connection's WAL (synchronous FULL or EXTRA: the connection commits at
 * WAL NORMAL and this makes its commits durable). One fdatasync runs at a time, on libuv's pool,
 * and covers every commit made before it started, whoever made it: the WAL is one file written in
 * order, so an fsync also carries every earlier commit of this or another process.
 */
export class WalFsync {
  /** Durable commits asked for, and how many of them an fsync has covered. */
  private commits = 0;
  private fsyncedCommits = 0;
  private fsyncing: Promise<void> | undefined;
  /** A `soon` commit was made after the last fsync began: nothing has carried it to disk yet. */
  private soonPending = false;
  private soonTimer: NodeJS.Timeout | undefined;
  /**
   * When the connection last committed a claim, lease or note (performance.now()): within
   * PIPELINE_WINDOW_MS of one it serves a pipeline whose other work waits on the event loop, and
   * makes no fsync inline (see `durable`).
   */
  private lastCoordinationAt = Number.NEGATIVE_INFINITY;
  private readonly fdatasync: NonNullable<SqliteJournalOptions["fdatasync"]>;
  /** The inline fsync of a lone write; none when a test injects `fdatasync`. */
  private readonly fdatasyncSync: ((fd: number) => void) | undefined;
  private walFd: number | undefined;
  /** fsyncs of the WAL made, for metrics and tests. */
  fsyncs = 0;
  /** Of those, the ones made inline, on the event loop (a lone write outside a pipeline). */
  inlineFsyncs = 0;
  /** The error of a failed fsync: after it nothing this process wrote can be called durable. */
  failure: IdemError | undefined;

  constructor(
    private readonly path: string,
    injected: SqliteJournalOptions["fdatasync"],
    /** Called after each fsync on the pool ends (the connection's deferred batch goes then). */
    private readonly ended: () => void,
  ) {
    this.fdatasync = injected ?? fdatasync;
    this.fdatasyncSync = injected ? undefined : fdatasyncSync;
  }

  /** An fsync is running on the pool. */
  get busy(): boolean {
    return this.fsyncing !== undefined;
  }

  /** A claim, lease or note was committed: no fsync of its own (see `SqliteConnection.write`). */
  coordinated(): void {
    this.lastCoordinationAt = performance.now();
  }

  /**
   * A commit that may be durable soon rather than now was made: it is not answered after an fsync,
   * the next durable commit's fsync carries it (the WAL is written in order), and if none comes
   * within SOON_MS it gets one of its own. A process crash loses nothing of it (the WAL is
   * written); a power loss within that window may.
   */
  soon(): void {
    this.soonPending = true;
    if (this.soonTimer) return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      // A failure is kept in `failure`: every later write of the process throws it.
      if (this.soonPending && !this.failure) this.durable().catch(() => {});
    }, SOON_MS);
    this.soonTimer.unref();
  }

  /**
   * Resolves once every commit made so far is on disk. Writers that commit while an fsync runs
   * share the next one. A failed fsync fails every waiter and every later write of this process
   * (the kernel may forget the failed pages: retrying the fsync could succeed without them), so
   * the process must restart.
   */
  async durable(lone = false): Promise<void> {
    const mark = ++this.commits;
    // A write that came alone, with no fsync running, is fsynced inline as SQLite's FULL would:
    // nobody waits to share it, and the thread-pool round trip would only add to its latency. Not
    // in a pipeline (claims or notes committed in the last few ms, as the executor's): there the
    // 100-200 µs the fsync blocks the event loop are taken from deliveries waiting on it.
    if (
      lone &&
      !this.fsyncing &&
      this.fdatasyncSync &&
      performance.now() - this.lastCoordinationAt > PIPELINE_WINDOW_MS
    ) {
      if (this.failure) throw this.failure;
      this.fsyncs += 1;
      this.inlineFsyncs += 1;
      this.soonPending = false;
      const fd = this.fd();
      try {
        this.fdatasyncSync(fd);
      } catch (e) {
        this.failure = fsyncFailed(e as NodeJS.ErrnoException);
        throw this.failure;
      }
      this.fsyncedCommits = Math.max(this.fsyncedCommits, mark);
      return;
    }
    while (this.fsyncedCommits < mark) {
      if (this.failure) throw this.failure;
      if (!this.fsyncing) {
        const upTo = this.commits;
        this.soonPending = false;
        this.fsyncing = new Promise<void>((resolve) => {
          this.fsyncs += 1;
          this.fdatasync(this.fd(), (err) => {
            if (err) this.failure = fsyncFailed(err);
            else this.fsyncedCommits = Math.max(this.fsyncedCommits, upTo);
            this.fsyncing = undefined;
            resolve();
            this.ended();
          });
        });
      }
      await this.fsyncing;
    }
  }

  /**
   * Waits for the fsync in flight, makes a `soon` commit nothing carried yet durable (a clean
   * close leaves every commit on disk), then closes the WAL descriptor; idempotent.
   * @throws IO when that last fsync fails.
   */
  async close(): Promise<void> {
    clearTimeout(this.soonTimer);
    this.soonTimer = undefined;
    try {
      if (this.soonPending && !this.failure) await this.durable();
      await this.fsyncing;
    } finally {
      if (this.walFd !== undefined) closeSync(this.walFd);
      this.walFd = undefined;
    }
  }

  private fd(): number {
    this.walFd ??= openSync(`${this.path}-wal`, "r");
    return this.walFd;
  }
}
