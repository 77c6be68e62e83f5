import { randomUUID } from "node:crypto";
import { closeSync, existsSync, fdatasyncSync, mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Clock, type IdemError, systemClock } from "@idem/schema";
import Database from "better-sqlite3";
import { missingJournal } from "../../domain/missing-journal.js";
import type { NewEvent } from "../../port/events.js";
import { whileBusy } from "./busy.js";
import {
  checkIdemSchema,
  checkJournalFile,
  createJournalFile,
  damagedOnOpen,
} from "./journal-file.js";
import { migrate } from "./migrate.js";
import type { SqliteJournalOptions } from "./sqlite-options.js";
import { json } from "./statements.js";
import { WalFsync } from "./wal-fsync.js";

export type { SqliteJournalOptions } from "./sqlite-options.js";

interface PendingWrite {
  fn: () => unknown;
  /** false for claims, leases and notes: see `write`. */
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (e: unknown) => void;
}

const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), "../../../migrations");
const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

/** Group fsync replaces SQLite's own at FULL and EXTRA, for a file this process may write. */
const groupFsyncOf = (path: string, options: SqliteJournalOptions) =>
  !options.readonly &&
  path !== ":memory:" &&
  path !== "" &&
  (options.synchronous ?? "FULL") !== "NORMAL" &&
  options.synchronous !== "OFF";

function fdatasyncWal(path: string): void {
  const fd = openSync(`${path}-wal`, "r");
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * `PRAGMA journal_mode = WAL`, tried again while it answers busy, up to the busy timeout. A new
 * file's first connections race to switch it to WAL, and SQLite answers that switch SQLITE_BUSY at
 * once, without its busy handler (seen: one of four processes opening one new journal together).
 */
const walMode = (db: Database.Database, busyTimeoutMs: number) =>
  whileBusy(() => db.pragma("journal_mode = WAL"), busyTimeoutMs, { firstMs: 1, maxMs: 50 });

/**
 * The one connection of a SQLite journal: the better-sqlite3 handle, its prepared statements,
 * transactions, group commit and the WAL's durability (group fsync). Every concern of the store
 * writes through it; once an fsync failed (`failure`), every write throws.
 */
export class SqliteConnection {
  readonly path: string;
  readonly db: Database.Database;
  readonly clock: Clock;
  /** The source of lease tokens. */
  readonly ids: () => string;
  private readonly stmts = new Map<string, Database.Statement>();
  private pending: PendingWrite[] = [];
  /** A flush is queued with setImmediate. */
  private flushQueued = false;
  /** Durable writes wait for the fsync in flight, then commit together (see `batched`). */
  private flushAfterFsync = false;
  private readonly busyTimeoutMs: number;
  /**
   * At synchronous FULL (or EXTRA) the connection commits at WAL NORMAL and this fsyncs the WAL,
   * off the event loop, once for every write that waited on it (see `durable`); none otherwise.
   */
  private readonly wal: WalFsync | undefined;

  private constructor(
    path: string,
    db: Database.Database,
    options: SqliteJournalOptions,
    groupFsync: boolean,
  ) {
    this.path = path;
    this.db = db;
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? randomUUID;
    this.busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    this.wal = groupFsync
      ? new WalFsync(path, options.fdatasync, () => {
          if (this.flushAfterFsync) {
            this.flushAfterFsync = false;
            void this.flush();
          }
        })
      : undefined;
  }

  /**
   * Opens a journal file, creating it whole when missing (made aside and linked into place, so
   * several processes may open a new one at once) unless `create` is false or it is read-only,
   * and applies pending migrations under SQLite's write lock. A file that is empty, not a SQLite
   * database, not idem's, or marked damaged is refused (docs/runbook.md, "A damaged journal"), and
   * so is a missing one that may not be created ("A lost journal").
   * @throws INTEGRITY for such a file; the SQLite error when it cannot be opened or migrated.
   */
  static open(path: string, options: SqliteJournalOptions = {}): SqliteConnection {
    const file = path !== ":memory:" && path !== "";
    if (file && !existsSync(path)) {
      if (options.readonly || options.create === false) throw missingJournal(path);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      createJournalFile(path, MIGRATIONS);
    }
    if (file && existsSync(path)) checkJournalFile(path, options.allowDamaged ?? false);
    const db = new Database(path, {
      timeout: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
      readonly: options.readonly ?? false,
    });
    const group = groupFsyncOf(path, options);
    try {
      if (file) checkIdemSchema(db, path);
      if (!options.readonly) {
        walMode(db, options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
        db.pragma(`synchronous = ${group ? "NORMAL" : (options.synchronous ?? "FULL")}`);
        db.pragma("foreign_keys = ON");
        if (migrate(db, MIGRATIONS) > 0 && group) fdatasyncWal(path);
      }
    } catch (e) {
      db.close();
      throw damagedOnOpen(e, path);
    }
    return new SqliteConnection(path, db, options, group);
  }

  /** A prepared statement, prepared once per connection. */
  st(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  /** One write transaction taken with BEGIN IMMEDIATE, so a read-then-write never races another process. */
  tx<T>(fn: () => T): T {
    const failure = this.failure;
    if (failure) throw failure;
    if (this.db.inTransaction) return fn();
    this.beginImmediate();
    try {
      const result = fn();
      this.st("COMMIT").run();
      return result;
    } catch (e) {
      if (this.db.inTransaction) this.st("ROLLBACK").run();
      throw e;
    }
  }

  /** fsyncs of the WAL made by this connection (group fsync only), for metrics and tests. */
  get fsyncs(): number {
    return this.wal?.fsyncs ?? 0;
  }

  /** Of those, the ones made inline, on the event loop (a lone write outside a pipeline). */
  get inlineFsyncs(): number {
    return this.wal?.inlineFsyncs ?? 0;
  }

  /** The error of a failed fsync: after it nothing this process wrote can be called durable. */
  get failure(): IdemError | undefined {
    return this.wal?.failure;
  }

  /**
   * A transaction whose caller is answered once it is as durable as `durability` asks:
   * - `now` (true, the default): on disk (see `durable`).
   * - `soon`: committed, so a process crash loses nothing (the WAL is written), and carried to
   *   disk by the next `now` write's fsync or within SOON_MS (see `WalFsync.soon`); a power loss
   *   before that may lose it. Only for writes whose loss recovery redoes (a settle of a probed
   *   effect, a run's completion: the next holder probes again).
   * - `false`: writes that only coordinate live processes (claims, leases, notes): a process crash
   *   loses nothing, a power loss loses them with every process that held them, and the next
   *   durable commit's fsync carries them to disk first (the WAL is written in order).
   */
  async write<T>(fn: () => T, durability: boolean | "soon" = true): Promise<T> {
    const result = this.tx(fn);
    if (durability === true) await this.durable();
    else if (durability === "soon") this.wal?.soon();
    else this.wal?.coordinated();
    return result;
  }

  /**
   * Resolves once every commit this connection has made so far is on disk: with group fsync, by
   * one fdatasync of the WAL shared with every writer waiting on it (see WalFsync). Other processes
   * may read a commit before its fsync; what they do with it durably (an intent, a claim's
   * effects) is written after it in the WAL and fsynced with it.
   */
  async durable(lone = false): Promise<void> {
    await this.wal?.durable(lone);
  }

  /**
   * Takes the write lock, polling every 50 µs to 2 ms with jitter instead of SQLite's busy handler:
   * that one sleeps up to 100 ms between tries, so under several writer processes a waiter misses
   * lock after lock (measured here: 1.2 s waits beside 0.1 ms commits). Throws SQLITE_BUSY after
   * the busy timeout, like the handler would.
   */
  private beginImmediate(): void {
    const begin = this.st("BEGIN IMMEDIATE");
    this.st("PRAGMA busy_timeout = 0").run();
    try {
      whileBusy(() => begin.run(), this.busyTimeoutMs, { firstMs: 0.05, maxMs: 2 });
    } finally {
      this.st(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`).run();
    }
  }

  /** Appends an event inside the caller's transaction. */
  event(event: NewEvent): void {
    this.st("INSERT INTO events (at, job_id, type, data, actor) VALUES (?, ?, ?, ?, ?)").run(
      this.clock.now(),
      event.jobId,
      event.type,
      json(event.data),
      event.actor,
    );
  }

  /**
   * Group commit: writes that arrive while one is being written share the next transaction, so
   * concurrent callers (deliveries in flight, submissions) pay one fsync between them. A write that
   * throws is rolled back alone and answered with its error (see `flush`);
   * every caller is answered only after the commit, and a failing commit rejects them all with
   * nothing written.
   */
  batched<T>(fn: () => T, durable = true): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, durable, resolve: resolve as (v: unknown) => void, reject });
      if (this.flushQueued || this.flushAfterFsync) {
        if (!durable && !this.flushQueued) this.queueFlush();
        return;
      }
      // Durable writes that arrive while an fsync runs would wait for the next one anyway: they
      // commit together when it ends, one transaction instead of one each.
      if (durable && this.wal?.busy) this.flushAfterFsync = true;
      else this.queueFlush();
    });
  }

  private queueFlush(): void {
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      void this.flush();
    });
  }
  private async flush(): Promise<void> {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    let results: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      // Optimistically without savepoints: writes rarely throw, and a savepoint and its release
      // are two statements per write. If one throws, the whole transaction rolls back and the
      // batch runs again, each write in its own savepoint, so only the failing one fails. A lone
      // write needs no savepoint at all: its error is the transaction's.
      let opFailed = false;
      try {
        this.tx(() => {
          for (const op of batch) {
            try {
              results.push({ ok: true, value: op.fn() });
            } catch (error) {
              opFailed = batch.length > 1;
              throw error;
            }
          }
        });
      } catch (e) {
        if (!opFailed) throw e;
        results = [];
        this.tx(() => {
          for (const op of batch) {
            this.st("SAVEPOINT op").run();
            try {
              results.push({ ok: true, value: op.fn() });
              this.st("RELEASE op").run();
            } catch (error) {
              this.st("ROLLBACK TO op").run();
              this.st("RELEASE op").run();
              results.push({ ok: false, error });
            }
          }
        });
      }
    } catch (e) {
      for (const op of batch) op.reject(e);
      return;
    }
    // Committed. Claims, leases and notes are answered now; only durable writes wait for the fsync
    // (a claim that shared a commit with a record used to wait for the record's fsync too).
    const answer = (op: PendingWrite, i: number) => {
      const r = results[i] as (typeof results)[number];
      if (r.ok) op.resolve(r.value);
      else op.reject(r.error);
    };
    let durableWrites = 0;
    batch.forEach((op, i) => {
      if (op.durable) durableWrites += 1;
      else answer(op, i);
    });
    if (durableWrites < batch.length) this.wal?.coordinated();
    if (durableWrites === 0) return;
    try {
      await this.durable(batch.length === 1);
    } catch (e) {
      for (const op of batch) if (op.durable) op.reject(e);
      return;
    }
    batch.forEach((op, i) => {
      if (op.durable) answer(op, i);
    });
  }

  /**
   * Waits for the fsync in flight and makes every commit durable (a `soon` one too), then closes
   * the WAL descriptor and the handle; idempotent.
   */
  async close(): Promise<void> {
    try {
      await this.wal?.close();
    } finally {
      if (this.db.open) this.db.close();
    }
  }
}
