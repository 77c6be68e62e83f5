import type { Clock } from "@idem/schema";

/** How a SQLite journal is opened: durability, injected clock and ids, lock waits, read-only. */
export interface SqliteJournalOptions {
  /**
   * FULL (the default) and EXTRA: every write is durable at the host before it is answered, by
   * group fsync (see `durable` below). NORMAL and OFF are SQLite's own: a power loss may lose the
   * last writes.
   */
  synchronous?: "OFF" | "NORMAL" | "FULL" | "EXTRA";
  /**
   * The WAL's fdatasync, for tests that make it fail or hold it; `node:fs` fdatasync by default.
   * When given, every fsync goes through it (a lone write is not fsynced inline then).
   */
  fdatasync?: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;
  clock?: Clock;
  /** The source of lease tokens. */
  ids?: () => string;
  /** How long a writer waits for another process's lock before SQLITE_BUSY. */
  busyTimeoutMs?: number;
  /** Read-only: nothing is written, and a missing file is refused (INTEGRITY, `reason: "missing"`). */
  readonly?: boolean;
  /**
   * Whether a missing file is created (the default, for an embedding process and `idem init`).
   * False: a missing file is refused, INTEGRITY with `details.reason` `missing` naming the path and
   * docs/runbook.md "A lost journal", and nothing is created (every command but `idem init`).
   */
  create?: boolean;
  /**
   * Opens a journal marked damaged (`<journal>.damaged`, see journal-file.ts): for `idem doctor`,
   * which checks it again, and `idem backup`, which keeps a copy. Every other open refuses it.
   */
  allowDamaged?: boolean;
}
