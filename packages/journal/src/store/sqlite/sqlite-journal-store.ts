import { randomUUID } from "node:crypto";
import { closeSync, fdatasync, fdatasyncSync, mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AgentOutput,
  type Clock,
  canonicalJson,
  type FailureClass,
  IdemError,
  type Job,
  sha256Hex,
  systemClock,
} from "@idem/schema";
import Database from "better-sqlite3";
import type {
  Claim,
  ClaimOptions,
  DeadLetterRecord,
  EffectRecord,
  EffectState,
  EnqueueResult,
  EventRecord,
  IntendInput,
  JobClaimResult,
  JobLease,
  JobRecord,
  JobState,
  JournalDeadLetters,
  JournalEvents,
  JournalJobs,
  JournalLedger,
  JournalMaintenance,
  JournalOutputs,
  JournalRuns,
  JournalStatus,
  JournalStore,
  LatestRun,
  Lease,
  LedgerEntry,
  ListFilter,
  OutputRecord,
  OutputSummary,
  PruneOptions,
  PruneResult,
  RecordOptions,
  RecordResult,
  ReplaySelection,
  RunRecord,
  RunState,
} from "../../journal-store.js";
import { EFFECT_STATES, JOB_STATES, RUN_STATES } from "../../journal-store.js";
import { migrate } from "./migrate.js";
import { selectOutputs } from "./select.js";

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
  readonly?: boolean;
}

const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), "../../../migrations");

export const TRIGGERS = [
  "outputs_no_update",
  "outputs_no_delete",
  "rejections_no_update",
  "rejections_no_delete",
  "events_no_update",
  "events_no_delete",
  "runs_no_delete",
  "effects_no_delete",
  "job_inputs_no_update",
  "job_inputs_no_delete",
] as const;

interface OutputRow {
  seq: number;
  job_id: string;
  agent: string;
  content_hash: string;
  body: string;
  source: string;
  recorded_at: number;
}
interface RunRow {
  id: number;
  job_id: string;
  generation: number;
  state: RunState;
  due_at: number | null;
  lease_owner: string | null;
  lease_token: string | null;
  lease_until: number | null;
  attempts: number;
  lease_expiries: number;
  next_at: number | null;
  last_error: string | null;
  class: FailureClass | null;
  force_unprobeable: number;
  targets: string;
  created_at: number;
  updated_at: number;
}
interface EffectRow {
  key: string;
  generation: number;
  job_id: string;
  idx: number;
  kind: string;
  spec_hash: string;
  state: EffectState;
  detail: string | null;
  attempts: number;
  updated_at: number;
}
interface JobRow {
  seq: number;
  job_id: string;
  agent: string;
  input_hash: string;
  state: JobState;
  deliveries: number;
  lease_owner: string | null;
  lease_token: string | null;
  lease_until: number | null;
  next_at: number | null;
  stream_seq: number | null;
  last_error: string | null;
  last_class: FailureClass | null;
  retries: number;
  created_at: number;
  updated_at: number;
}
interface DeadLetterRow {
  id: number;
  job_id: string;
  agent: string | null;
  class: FailureClass;
  deliveries: number;
  last_error: string;
  at: number;
  resolved_at: number | null;
  resolution: string | null;
}

const toOutput = (r: OutputRow): OutputRecord => ({
  seq: r.seq,
  jobId: r.job_id,
  agent: r.agent,
  contentHash: r.content_hash,
  output: JSON.parse(r.body) as AgentOutput,
  source: r.source,
  recordedAt: r.recorded_at,
});
const toRun = (r: RunRow): RunRecord => ({
  id: r.id,
  jobId: r.job_id,
  generation: r.generation,
  state: r.state,
  attempts: r.attempts,
  leaseExpiries: r.lease_expiries,
  leaseOwner: r.lease_owner,
  leaseUntil: r.lease_until,
  nextAt: r.next_at,
  lastError: r.last_error,
  class: r.class,
  forceUnprobeable: r.force_unprobeable === 1,
  targets: JSON.parse(r.targets) as string[],
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toEffect = (r: EffectRow): EffectRecord => ({
  key: r.key,
  generation: r.generation,
  jobId: r.job_id,
  idx: r.idx,
  kind: r.kind,
  specHash: r.spec_hash,
  state: r.state,
  detail: r.detail === null ? null : (JSON.parse(r.detail) as Record<string, unknown>),
  attempts: r.attempts,
  updatedAt: r.updated_at,
});
/** A jobs row with its input from job_inputs (JOB_WITH_INPUT). */
type JobRowWithInput = JobRow & { input: string };
const toJob = (r: JobRowWithInput): JobRecord => jobRecord(r, JSON.parse(r.input) as unknown);
/** A job record from a jobs row and its parsed input. */
const jobRecord = (r: JobRow, input: unknown): JobRecord => ({
  jobId: r.job_id,
  agent: r.agent,
  input,
  inputHash: r.input_hash,
  state: r.state,
  deliveries: r.deliveries,
  leaseOwner: r.lease_owner,
  leaseUntil: r.lease_until,
  nextAt: r.next_at,
  streamSeq: r.stream_seq,
  lastError: r.last_error,
  lastClass: r.last_class,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toDeadLetter = (r: DeadLetterRow): DeadLetterRecord => ({
  id: r.id,
  jobId: r.job_id,
  agent: r.agent,
  class: r.class,
  deliveries: r.deliveries,
  lastError: r.last_error,
  at: r.at,
  resolvedAt: r.resolved_at,
  resolution: r.resolution,
});

interface PendingWrite {
  fn: () => unknown;
  /** false for claims, leases and notes: see `write`. */
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (e: unknown) => void;
}

const DEFAULT_BUSY_TIMEOUT_MS = 10_000;
/** A claim or note committed this recently marks the store as serving a pipeline (`durable`). */
const PIPELINE_WINDOW_MS = 10;
/** A sleeping place for Atomics.wait: a synchronous sleep without spinning the CPU. */
const SLEEP = new Int32Array(new SharedArrayBuffer(4));

const ACTIVE = "('pending','running','failed')";
/** Jobs rows with their inputs, as `jobs`: where clauses name the jobs columns unqualified. */
const JOB_WITH_INPUT =
  "SELECT jobs.*, job_inputs.input FROM jobs JOIN job_inputs ON job_inputs.seq = jobs.seq";

/**
 * A job's canonical input and its hash, sha256 of the canonical `{agent, input}`, built around the
 * canonical input (keys "agent" < "input", no whitespace) so the input is serialized once.
 */
function jobInput(job: Job): { input: string; hash: string } {
  const input = canonicalJson(job.input);
  return { input, hash: sha256Hex(`{"agent":${canonicalJson(job.agent)},"input":${input}}`) };
}

/** Group fsync replaces SQLite's own at FULL and EXTRA, for a file this process may write. */
const groupFsyncOf = (path: string, options: SqliteJournalOptions) =>
  !options.readonly &&
  path !== ":memory:" &&
  path !== "" &&
  (options.synchronous ?? "FULL") !== "NORMAL" &&
  options.synchronous !== "OFF";

const fsyncFailed = (err: NodeJS.ErrnoException) =>
  new IdemError(
    "IO",
    `the journal's fsync failed (${err.code ?? err.message}): writes since the last good fsync may not be durable; restart this process`,
    { cause: err },
  );

function fdatasyncWal(path: string): void {
  const fd = openSync(`${path}-wal`, "r");
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
/**
 * The rowid an `INSERT ... ON CONFLICT DO NOTHING` inserted, or undefined when it inserted nothing.
 * Cheaper than RETURNING, which materializes a result row.
 */
const insertedRowid = (r: Database.RunResult): number | undefined =>
  r.changes === 1 ? Number(r.lastInsertRowid) : undefined;
const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

/**
 * Opens (creating when missing) a journal file and applies pending migrations under SQLite's write
 * lock, so several processes may open a new file at once.
 */
/** Rows per page of a bulk read: between two pages the event loop runs (other work waits on it). */
const PAGE_ROWS = 2000;

/** A table read in pages by its integer primary key (the first column), yielding between pages. */
async function* pagesOf<R extends [number, ...unknown[]]>(statement: {
  all(...params: unknown[]): unknown[];
}): AsyncGenerator<R[]> {
  for (let after = 0; ; ) {
    const rows = statement.all(after, PAGE_ROWS) as R[];
    yield rows;
    if (rows.length < PAGE_ROWS) return;
    after = (rows[rows.length - 1] as R)[0];
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export async function openJournal(
  path: string,
  options: SqliteJournalOptions = {},
): Promise<SqliteJournalStore> {
  return SqliteJournalStore.open(path, options);
}

/** The SQLite adapter of the JournalStore port (better-sqlite3, WAL, drizzle-kit migrations). */
export class SqliteJournalStore implements JournalStore {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly clock: Clock;
  private readonly ids: () => string;
  private readonly stmts = new Map<string, Database.Statement>();
  private pending: PendingWrite[] = [];
  /** A flush is queued with setImmediate. */
  private flushQueued = false;
  /** Durable writes wait for the fsync in flight, then commit together (see `batched`). */
  private flushAfterFsync = false;
  private readonly busyTimeoutMs: number;
  /**
   * At synchronous FULL (or EXTRA) the connection commits at WAL NORMAL and this store fsyncs the
   * WAL itself, off the event loop, once for every write that waited on it (see `durable`).
   */
  private readonly groupFsync: boolean;
  /** Durable commits made on this connection, and how many of them an fsync has covered. */
  private commits = 0;
  private fsyncedCommits = 0;
  private fsyncing: Promise<void> | undefined;
  private readonly fdatasync: NonNullable<SqliteJournalOptions["fdatasync"]>;
  /**
   * When this store last committed a claim, lease or note (performance.now()): within
   * PIPELINE_WINDOW_MS of one it serves a pipeline whose other work waits on the event loop, and
   * makes no fsync inline (see `durable`).
   */
  private lastCoordinationAt = Number.NEGATIVE_INFINITY;
  /** The inline fsync of a lone write; none when a test injects `fdatasync`. */
  private readonly fdatasyncSync: ((fd: number) => void) | undefined;
  /** fsyncs of the WAL made by this store (group fsync only), for metrics and tests. */
  fsyncs = 0;
  /** Of those, the ones made inline, on the event loop (a lone write outside a pipeline). */
  inlineFsyncs = 0;
  private walFd: number | undefined;
  /** The error of a failed fsync: after it nothing this process wrote can be called durable. */
  private fsyncFailure: IdemError | undefined;

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
    this.groupFsync = groupFsync;
    this.fdatasync = options.fdatasync ?? fdatasync;
    this.fdatasyncSync = options.fdatasync ? undefined : fdatasyncSync;
  }

  static open(path: string, options: SqliteJournalOptions = {}): SqliteJournalStore {
    if (path !== ":memory:" && !options.readonly) mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path, {
      timeout: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
      readonly: options.readonly ?? false,
    });
    const group = groupFsyncOf(path, options);
    try {
      if (!options.readonly) {
        db.pragma("journal_mode = WAL");
        db.pragma(`synchronous = ${group ? "NORMAL" : (options.synchronous ?? "FULL")}`);
        db.pragma("foreign_keys = ON");
        if (migrate(db, MIGRATIONS) > 0 && group) fdatasyncWal(path);
      }
    } catch (e) {
      db.close();
      throw e;
    }
    return new SqliteJournalStore(path, db, options, group);
  }

  get failure(): IdemError | undefined {
    return this.fsyncFailure;
  }

  get location(): string {
    return this.path;
  }

  // TEMPORARY (refactor in progress): the namespaces delegate to the flat methods until the
  // adapter is split by concern.
  readonly outputs: JournalOutputs = {
    record: (output, options) => this.record(output, options),
    get: (jobId) => this.get(jobId),
    has: (jobId) => this.has(jobId),
    list: (filter) => this.list(filter),
    select: (selection) => this.select(selection),
    page: (selection, page) => this.selectPage(selection, page),
    rejections: (jobId) => this.rejections(jobId),
  };

  readonly runs: JournalRuns = {
    claim: (options) => this.claim(options),
    extendLease: (lease, ms) => this.extendLease(lease, ms),
    release: (lease) => this.release(lease),
    complete: (lease) => this.complete(lease),
    fail: (lease, failure) => this.fail(lease, failure),
    markDead: (lease, failure) => this.dead(lease, failure),
    forJob: (jobId) => this.runsOf(jobId),
    latest: (jobId) => this.latestRun(jobId),
    latestOf: (jobIds) => this.latestRunsOf(jobIds),
    nextDueAt: () => this.nextDueAt(),
    active: () => this.activeRuns(),
    replay: (selection, options) => this.replay(selection, options),
  };

  readonly ledger: JournalLedger = {
    intend: (lease, effect) => this.intend(lease, effect),
    settle: (lease, key, state, detail) => this.settle(lease, key, state, detail),
    forJob: (jobId, generation) => this.effects(jobId, generation),
    history: (key) => this.effectHistory(key),
    ofJobs: (jobIds) => this.ledgersOf(jobIds),
    resolve: (jobId, decision, reason, actor) => this.resolve(jobId, decision, reason, actor),
  };

  readonly jobs: JournalJobs = {
    enqueue: (job, options) => this.enqueueJob(job, options),
    get: (jobId) => this.getJob(jobId),
    setStreamSeq: (jobId, seq, event) => this.setJobStreamSeq(jobId, seq, event),
    claimNext: (options) => this.claimNextJob(options),
    claim: (job, options) => this.claimJob(job, options),
    extendLease: (lease, ms) => this.extendJobLease(lease, ms),
    fail: (lease, failure) => this.failJob(lease, failure),
    pending: (options) => this.pendingJobs(options),
    count: async (options = {}) =>
      (
        (options.since === undefined
          ? this.st("SELECT COUNT(*) AS n FROM jobs").get()
          : this.st("SELECT COUNT(*) AS n FROM jobs WHERE created_at >= ?").get(options.since)) as {
          n: number;
        }
      ).n,
  };

  readonly deadLetters: JournalDeadLetters = {
    add: (jobId, failure, lease) => this.deadLetterJob(jobId, failure, lease),
    list: (options) => this.listDeadLetters(options),
    resolve: (jobId, resolution) => this.resolveDeadLetter(jobId, resolution),
  };

  readonly events: JournalEvents = {
    append: (event) => this.appendEvent(event),
    list: (filter) => this.listEvents(filter),
    count: (types, since) => this.countEvents(types, since),
  };

  readonly maintenance: JournalMaintenance = {
    prune: (options) => this.prune(options),
    integrity: () => this.integrity(),
    backup: (file) => this.backup(file),
  };

  /** The latest run of each output, in pages of the runs table (one pass beats one query each). */
  private async latestRunsOf(jobIds: readonly string[]): Promise<ReadonlyMap<string, LatestRun>> {
    const wanted = new Set(jobIds);
    const latest = new Map<string, LatestRun>();
    const page = this.db
      .prepare("SELECT id, job_id, generation, state FROM runs WHERE id > ? ORDER BY id LIMIT ?")
      .raw(true);
    for await (const rows of pagesOf<[number, string, number, RunState]>(page)) {
      for (const [, jobId, generation, state] of rows) {
        if (!wanted.has(jobId)) continue;
        const cur = latest.get(jobId);
        if (!cur || generation > cur.generation) latest.set(jobId, { generation, state });
      }
    }
    return latest;
  }

  /** Every ledger row of the effects of many outputs, by key, in pages of the effects table. */
  private async ledgersOf(
    jobIds: readonly string[],
  ): Promise<ReadonlyMap<string, readonly LedgerEntry[]>> {
    const wanted = new Set(jobIds);
    const ledgers = new Map<string, LedgerEntry[]>();
    const page = this.db
      .prepare(
        "SELECT id, job_id, key, generation, state FROM effects WHERE id > ? ORDER BY id LIMIT ?",
      )
      .raw(true);
    for await (const rows of pagesOf<[number, string, string, number, EffectState]>(page)) {
      for (const [, jobId, key, generation, state] of rows) {
        if (!wanted.has(jobId)) continue;
        const list = ledgers.get(key);
        if (list) list.push({ generation, state });
        else ledgers.set(key, [{ generation, state }]);
      }
    }
    return ledgers;
  }

  /** The raw better-sqlite3 handle, for tests and benchmarks. */
  get database(): Database.Database {
    return this.db;
  }

  private st(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  /** One write transaction taken with BEGIN IMMEDIATE, so a read-then-write never races another process. */
  private tx<T>(fn: () => T): T {
    if (this.fsyncFailure) throw this.fsyncFailure;
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

  /**
   * A transaction whose caller is answered once it is durable. `durable: false` is for writes that
   * only coordinate live processes (claims, leases, notes): a process crash loses nothing (the WAL
   * is written), a power loss loses them with every process that held them, and the next durable
   * commit's fsync carries them to disk first (the WAL is written in order).
   */
  private async write<T>(fn: () => T, durable = true): Promise<T> {
    const result = this.tx(fn);
    if (durable) await this.durable();
    else this.lastCoordinationAt = performance.now();
    return result;
  }

  /**
   * Resolves once every commit this connection has made so far is on disk. With group fsync, one
   * fdatasync of the WAL runs at a time on libuv's pool, not blocking the event loop, and covers
   * every commit made before it started: writers that commit while it runs share the next one.
   * Other processes may read a commit before its fsync; what they do with it durably (an intent, a
   * claim's effects) is written after it in the WAL and fsynced with it. A failed fsync fails every
   * waiter and every later write of this process (the kernel may forget the failed pages: retrying
   * the fsync could succeed without them), so the process must restart.
   */
  private async durable(lone = false): Promise<void> {
    if (!this.groupFsync) return;
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
      if (this.fsyncFailure) throw this.fsyncFailure;
      this.walFd ??= openSync(`${this.path}-wal`, "r");
      this.fsyncs += 1;
      this.inlineFsyncs += 1;
      try {
        this.fdatasyncSync(this.walFd);
      } catch (e) {
        this.fsyncFailure = fsyncFailed(e as NodeJS.ErrnoException);
        throw this.fsyncFailure;
      }
      this.fsyncedCommits = Math.max(this.fsyncedCommits, mark);
      return;
    }
    while (this.fsyncedCommits < mark) {
      if (this.fsyncFailure) throw this.fsyncFailure;
      if (!this.fsyncing) {
        const upTo = this.commits;
        this.fsyncing = new Promise<void>((resolve) => {
          this.walFd ??= openSync(`${this.path}-wal`, "r");
          this.fsyncs += 1;
          this.fdatasync(this.walFd, (err) => {
            if (err) {
              this.fsyncFailure = fsyncFailed(err);
            } else {
              this.fsyncedCommits = Math.max(this.fsyncedCommits, upTo);
            }
            this.fsyncing = undefined;
            resolve();
            if (this.flushAfterFsync) {
              this.flushAfterFsync = false;
              void this.flush();
            }
          });
        });
      }
      await this.fsyncing;
    }
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
      const deadline = Date.now() + this.busyTimeoutMs;
      let delayMs = 0.05;
      for (;;) {
        try {
          begin.run();
          return;
        } catch (e) {
          if ((e as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw e;
        }
        Atomics.wait(SLEEP, 0, 0, delayMs * (0.5 + Math.random()));
        delayMs = Math.min(delayMs * 2, 2);
      }
    } finally {
      this.st(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`).run();
    }
  }

  private event(
    jobId: string | null,
    type: string,
    actor: string,
    data?: Record<string, unknown>,
  ): void {
    this.st("INSERT INTO events (at, job_id, type, data, actor) VALUES (?, ?, ?, ?, ?)").run(
      this.clock.now(),
      jobId,
      type,
      json(data),
      actor,
    );
  }

  // --- outputs -------------------------------------------------------------------------------

  async record(output: AgentOutput, options: RecordOptions): Promise<RecordResult> {
    const body = options.canonical ?? canonicalJson(output);
    const hash = sha256Hex(body);
    return this.batched(() => this.recordInTx(output, options, body, hash));
  }

  /**
   * Group commit: writes that arrive while one is being written share the next transaction, so
   * concurrent callers (deliveries in flight, submissions) pay one fsync between them. A write that
   * throws is rolled back alone and answered with its error (see `flush`);
   * every caller is answered only after the commit, and a failing commit rejects them all with
   * nothing written.
   */
  private batched<T>(fn: () => T, durable = true): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, durable, resolve: resolve as (v: unknown) => void, reject });
      if (this.flushQueued || this.flushAfterFsync) {
        if (!durable && !this.flushQueued) this.queueFlush();
        return;
      }
      // Durable writes that arrive while an fsync runs would wait for the next one anyway: they
      // commit together when it ends, one transaction instead of one each.
      if (durable && this.fsyncing) this.flushAfterFsync = true;
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
    if (durableWrites < batch.length) this.lastCoordinationAt = performance.now();
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

  private recordInTx(
    output: AgentOutput,
    options: RecordOptions,
    body: string,
    hash: string,
  ): RecordResult {
    const actor = options.actor ?? options.source;
    const now = this.clock.now();
    const inserted = insertedRowid(
      this.st(
        `INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(job_id) DO NOTHING`,
      ).run(output.jobId, output.agent, hash, body, options.source, now),
    );
    if (inserted === undefined) {
      const existing = this.st("SELECT seq, content_hash FROM outputs WHERE job_id = ?").get(
        output.jobId,
      ) as {
        seq: number;
        content_hash: string;
      };
      if (existing.content_hash === hash) {
        this.event(output.jobId, "output.duplicate", actor, { source: options.source });
        return { status: "duplicate", jobId: output.jobId, seq: existing.seq, contentHash: hash };
      }
      this.st(
        "INSERT INTO rejections (job_id, content_hash, body, source, at) VALUES (?, ?, ?, ?, ?)",
      ).run(output.jobId, hash, body, options.source, now);
      this.event(output.jobId, "output.conflict", actor, {
        source: options.source,
        contentHash: hash,
        existingHash: existing.content_hash,
      });
      return {
        status: "conflict",
        jobId: output.jobId,
        contentHash: hash,
        existingHash: existing.content_hash,
      };
    }
    this.insertRun(output.jobId, 1, options.targets, false, now);
    this.st(
      `UPDATE jobs SET state = 'done', due_at = NULL, lease_owner = NULL, lease_token = NULL, lease_until = NULL,
       updated_at = ? WHERE job_id = ? AND state != 'done'`,
    ).run(now, output.jobId);
    this.event(output.jobId, "output.recorded", actor, {
      source: options.source,
      seq: inserted,
      contentHash: hash,
    });
    return { status: "recorded", jobId: output.jobId, seq: inserted, contentHash: hash };
  }

  /** A new pending run and its active targets; returns the run's id. */
  private insertRun(
    jobId: string,
    generation: number,
    targets: readonly string[],
    force: boolean,
    now: number,
  ): number {
    const id = Number(
      this.st(
        `INSERT INTO runs (job_id, generation, state, due_at, force_unprobeable, targets, created_at, updated_at)
         VALUES (?, ?, 'pending', ?, ?, ?, ?, ?)`,
      ).run(jobId, generation, now, force ? 1 : 0, JSON.stringify(targets), now, now)
        .lastInsertRowid,
    );
    this.activate(id, targets);
    return id;
  }

  /** A run that is pending again takes its place in the per-target order. */
  private activate(runId: number, targets: readonly string[]): void {
    const ins = this.st("INSERT OR IGNORE INTO active_targets (target, run_id) VALUES (?, ?)");
    for (const t of targets) ins.run(t, runId);
  }

  /** A run that is done or dead leaves the per-target order. */
  private deactivate(run: RunRow): void {
    this.st(
      "DELETE FROM active_targets WHERE run_id = ? AND target IN (SELECT value FROM json_each(?))",
    ).run(run.id, run.targets);
  }

  async get(jobId: string): Promise<OutputRecord | undefined> {
    const r = this.st("SELECT * FROM outputs WHERE job_id = ?").get(jobId) as OutputRow | undefined;
    return r && toOutput(r);
  }

  /**
   * Whether the job's output is recorded. A yes is durable before it is answered, since callers ack
   * deliveries on it: the output may be another process's commit whose fsync is still under way.
   */
  async has(jobId: string): Promise<boolean> {
    if (this.st("SELECT 1 FROM outputs WHERE job_id = ?").get(jobId) === undefined) return false;
    await this.durable();
    return true;
  }

  async list(filter: ListFilter = {}): Promise<OutputSummary[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.agent !== undefined) {
      where.push("o.agent = ?");
      args.push(filter.agent);
    }
    if (filter.since !== undefined) {
      where.push("o.recorded_at >= ?");
      args.push(filter.since);
    }
    if (filter.state !== undefined) {
      where.push("r.state = ?");
      args.push(filter.state);
    }
    const rows = this.db
      .prepare(
        `SELECT o.seq, o.job_id, o.agent, o.body, o.recorded_at, r.generation, r.state
         FROM outputs o JOIN runs r ON r.job_id = o.job_id
           AND r.generation = (SELECT MAX(generation) FROM runs WHERE job_id = o.job_id)
         ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY o.seq ${filter.limit !== undefined ? `LIMIT ${Math.max(0, Math.floor(filter.limit))}` : ""}`,
      )
      .all(...args) as (Omit<OutputRow, "content_hash" | "source"> & {
      generation: number;
      state: RunState;
    })[];
    return rows.map((r) => ({
      seq: r.seq,
      jobId: r.job_id,
      agent: r.agent,
      effects: (JSON.parse(r.body) as AgentOutput).effects.length,
      recordedAt: r.recorded_at,
      generation: r.generation,
      state: r.state,
    }));
  }

  async status(): Promise<JournalStatus> {
    const count = (sql: string) => (this.st(sql).get() as { n: number }).n;
    const runs = Object.fromEntries(RUN_STATES.map((s) => [s, 0])) as Record<RunState, number>;
    for (const r of this.st(
      `SELECT r.state, COUNT(*) AS n FROM runs r
       WHERE r.generation = (SELECT MAX(generation) FROM runs x WHERE x.job_id = r.job_id) GROUP BY r.state`,
    ).all() as { state: RunState; n: number }[]) {
      runs[r.state] = r.n;
    }
    const effects = Object.fromEntries(EFFECT_STATES.map((s) => [s, 0])) as Record<
      EffectState,
      number
    >;
    for (const r of this.st("SELECT state, COUNT(*) AS n FROM effects GROUP BY state").all() as {
      state: EffectState;
      n: number;
    }[]) {
      effects[r.state] = r.n;
    }
    const jobs = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
    for (const r of this.st("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state").all() as {
      state: JobState;
      n: number;
    }[]) {
      jobs[r.state] = r.n;
    }
    return {
      outputs: count("SELECT COUNT(*) AS n FROM outputs"),
      rejections: count("SELECT COUNT(*) AS n FROM rejections"),
      deadLetters: count("SELECT COUNT(*) AS n FROM dead_letters WHERE resolved_at IS NULL"),
      runs,
      effects,
      jobs,
    };
  }

  async rejections(jobId?: string) {
    const rows = (
      jobId === undefined
        ? this.st("SELECT * FROM rejections ORDER BY id").all()
        : this.st("SELECT * FROM rejections WHERE job_id = ? ORDER BY id").all(jobId)
    ) as { job_id: string; content_hash: string; body: string; source: string; at: number }[];
    return rows.map((r) => ({
      jobId: r.job_id,
      contentHash: r.content_hash,
      body: r.body,
      source: r.source,
      at: r.at,
    }));
  }

  // --- runs ----------------------------------------------------------------------------------

  async claim(options: ClaimOptions): Promise<Claim | undefined> {
    // Look before locking: an idle poller must not take the write lock (SQLite's busy handler backs
    // off up to 100 ms, so lock traffic from idle pollers slows every writer on the file).
    if (
      !this.st(
        `SELECT 1 FROM runs INDEXED BY runs_due WHERE state IN ${ACTIVE} AND due_at <= ? LIMIT 1`,
      ).get(this.clock.now())
    ) {
      return undefined;
    }
    return this.write(() => {
      const now = this.clock.now();
      for (;;) {
        const row = this.st(
          `SELECT r.* FROM runs r INDEXED BY runs_due
           WHERE r.state IN ${ACTIVE} AND r.due_at <= ?
             AND NOT EXISTS (
               SELECT 1 FROM json_each(r.targets) mine
               JOIN active_targets other ON other.target = mine.value AND other.run_id < r.id)
           ORDER BY r.due_at, r.id LIMIT 1`,
        ).get(now) as RunRow | undefined;
        if (!row) return undefined;
        const takeover = row.state === "running";
        if (takeover && row.lease_expiries + 1 >= options.maxLeaseExpiries) {
          const error = `lease expired ${row.lease_expiries + 1} times (maxLeaseExpiries ${options.maxLeaseExpiries}): the interpreter holding it keeps dying`;
          this.markDead(row, "infrastructure", error, options.owner);
          continue;
        }
        const token = this.ids();
        const until = now + options.leaseMs;
        const updated = this.st(
          `UPDATE runs SET state = 'running', lease_owner = ?, lease_token = ?, lease_until = ?, due_at = ?,
             lease_expiries = lease_expiries + ?, updated_at = ? WHERE id = ? RETURNING *`,
        ).get(options.owner, token, until, until, takeover ? 1 : 0, now, row.id) as RunRow;
        this.event(row.job_id, takeover ? "run.takeover" : "run.claimed", options.owner, {
          generation: row.generation,
          previousOwner: row.lease_owner,
          attempts: row.attempts,
        });
        const output = toOutput(
          this.st("SELECT * FROM outputs WHERE job_id = ?").get(row.job_id) as OutputRow,
        );
        const lease: Lease = {
          runId: row.id,
          jobId: row.job_id,
          generation: row.generation,
          token,
          owner: options.owner,
          until,
        };
        return { run: toRun(updated), output, lease, takeover };
      }
    }, false);
  }

  /** Refuses a stale holder: the run must be running under this very token. */
  private held(lease: Lease): RunRow {
    const row = this.st("SELECT * FROM runs WHERE id = ?").get(lease.runId) as RunRow | undefined;
    if (row?.state !== "running" || row.lease_token !== lease.token) {
      throw new IdemError(
        "LEASE_LOST",
        `the lease on run ${lease.jobId}#${lease.generation} was taken over or ended`,
        {
          details: { jobId: lease.jobId, generation: lease.generation, state: row?.state },
        },
      );
    }
    return row;
  }

  async extendLease(lease: Lease, leaseMs: number): Promise<Lease> {
    return this.write(() => {
      this.held(lease);
      const now = this.clock.now();
      const until = now + leaseMs;
      this.st("UPDATE runs SET lease_until = ?, due_at = ?, updated_at = ? WHERE id = ?").run(
        until,
        until,
        now,
        lease.runId,
      );
      return { ...lease, until };
    }, false);
  }

  async release(lease: Lease): Promise<void> {
    await this.write(() => {
      this.held(lease);
      const now = this.clock.now();
      this.st(
        `UPDATE runs SET state = 'pending', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = ?,
         updated_at = ? WHERE id = ?`,
      ).run(now, now, lease.runId);
      this.event(lease.jobId, "run.released", lease.owner, { generation: lease.generation });
    });
  }

  async complete(lease: Lease): Promise<void> {
    await this.write(() => {
      const run = this.held(lease);
      const open = this.st(
        `SELECT key, state FROM effects WHERE job_id = ? AND generation = ?
         AND state NOT IN ('applied','present','skipped') LIMIT 1`,
      ).get(lease.jobId, lease.generation) as { key: string; state: string } | undefined;
      if (open) {
        throw new IdemError(
          "INVALID_STATE",
          `run ${lease.jobId}#${lease.generation} cannot be done: effect ${open.key} is ${open.state}`,
        );
      }
      const now = this.clock.now();
      this.st(
        `UPDATE runs SET state = 'done', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = NULL,
         last_error = NULL, class = NULL, updated_at = ? WHERE id = ?`,
      ).run(now, lease.runId);
      this.deactivate(run);
      this.event(lease.jobId, "run.done", lease.owner, { generation: lease.generation });
    });
  }

  async fail(
    lease: Lease,
    failure: { class: FailureClass; error: string; nextAt: number },
  ): Promise<void> {
    await this.write(() => {
      this.held(lease);
      const now = this.clock.now();
      this.st(
        `UPDATE runs SET state = 'failed', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = ?,
         next_at = ?, attempts = attempts + 1, last_error = ?, class = ?, updated_at = ? WHERE id = ?`,
      ).run(failure.nextAt, failure.nextAt, failure.error, failure.class, now, lease.runId);
      this.event(lease.jobId, "run.failed", lease.owner, {
        generation: lease.generation,
        class: failure.class,
        error: failure.error,
        nextAt: failure.nextAt,
      });
    });
  }

  async dead(lease: Lease, failure: { class: FailureClass; error: string }): Promise<void> {
    await this.write(() => {
      const row = this.held(lease);
      this.st("UPDATE runs SET attempts = attempts + 1 WHERE id = ?").run(row.id);
      this.markDead(row, failure.class, failure.error, lease.owner);
    });
  }

  /** Dead releases the run's targets; its error and event name the later runs that go ahead of it. */
  private markDead(row: RunRow, cls: FailureClass, error: string, actor: string): void {
    const now = this.clock.now();
    const later = (
      this.st(
        `SELECT DISTINCT r.job_id FROM json_each(?) mine
         JOIN active_targets other ON other.target = mine.value AND other.run_id > ?
         JOIN runs r ON r.id = other.run_id
         ORDER BY other.run_id LIMIT 21`,
      ).all(row.targets, row.id) as { job_id: string }[]
    ).map((r) => r.job_id);
    const named =
      later.length === 0
        ? ""
        : `; later runs on its targets go ahead: ${later.slice(0, 20).join(", ")}${later.length > 20 ? ", ..." : ""}`;
    this.st(
      `UPDATE runs SET state = 'dead', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = NULL,
       last_error = ?, class = ?, updated_at = ? WHERE id = ?`,
    ).run(`${error}${named}`, cls, now, row.id);
    this.deactivate(row);
    this.event(row.job_id, "run.dead", actor, {
      generation: row.generation,
      class: cls,
      error,
      wentAhead: later.slice(0, 20),
    });
  }

  private async runsOf(jobId: string): Promise<RunRecord[]> {
    return (
      this.st("SELECT * FROM runs WHERE job_id = ? ORDER BY generation").all(jobId) as RunRow[]
    ).map(toRun);
  }

  async latestRun(jobId: string): Promise<RunRecord | undefined> {
    const r = this.st("SELECT * FROM runs WHERE job_id = ? ORDER BY generation DESC LIMIT 1").get(
      jobId,
    ) as RunRow | undefined;
    return r && toRun(r);
  }

  async nextDueAt(): Promise<number | undefined> {
    const r = this.st(`SELECT MIN(due_at) AS t FROM runs WHERE state IN ${ACTIVE}`).get() as {
      t: number | null;
    };
    return r.t ?? undefined;
  }

  async activeRuns(): Promise<{ pending: number; running: number; failed: number }> {
    const out = { pending: 0, running: 0, failed: 0 };
    for (const r of this.st(
      `SELECT state, COUNT(*) AS n FROM runs WHERE state IN ${ACTIVE} GROUP BY state`,
    ).all() as {
      state: "pending" | "running" | "failed";
      n: number;
    }[]) {
      out[r.state] = r.n;
    }
    return out;
  }

  async select(selection: ReplaySelection): Promise<OutputRecord[]> {
    return selectOutputs(this.db, selection);
  }

  async selectPage(
    selection: ReplaySelection,
    page: { afterSeq: number; limit: number },
  ): Promise<OutputRecord[]> {
    return selectOutputs(this.db, selection, page);
  }

  async replay(
    selection: ReplaySelection,
    options: { actor: string; forceUnprobeable?: boolean },
  ): Promise<RunRecord[]> {
    const outputs = await this.select(selection);
    return this.write(() => {
      const now = this.clock.now();
      const created: RunRecord[] = [];
      for (const o of outputs) {
        const latest = this.st(
          "SELECT * FROM runs WHERE job_id = ? ORDER BY generation DESC LIMIT 1",
        ).get(o.jobId) as RunRow | undefined;
        if (
          latest &&
          (latest.state === "pending" || latest.state === "running" || latest.state === "failed")
        ) {
          continue; // still being interpreted: a second generation beside it would race it
        }
        const targets = latest ? (JSON.parse(latest.targets) as string[]) : [];
        const id = this.insertRun(
          o.jobId,
          (latest?.generation ?? 0) + 1,
          targets,
          options.forceUnprobeable ?? false,
          now,
        );
        const row = this.st("SELECT * FROM runs WHERE id = ?").get(id) as RunRow;
        this.event(o.jobId, "run.replayed", options.actor, {
          generation: row.generation,
          forceUnprobeable: options.forceUnprobeable ?? false,
        });
        created.push(toRun(row));
      }
      return created;
    });
  }

  // --- effects ledger ------------------------------------------------------------------------

  async intend(lease: Lease, effect: IntendInput): Promise<EffectRecord> {
    return this.write(() => {
      this.held(lease);
      const now = this.clock.now();
      const inserted = this.st(
        `INSERT INTO effects (key, generation, job_id, idx, kind, spec_hash, state, detail, attempts, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'intended', ?, 1, ?) ON CONFLICT(key, generation) DO NOTHING RETURNING *`,
      ).get(
        effect.key,
        lease.generation,
        lease.jobId,
        effect.idx,
        effect.kind,
        effect.specHash,
        json(effect.detail),
        now,
      ) as EffectRow | undefined;
      if (inserted) {
        this.event(lease.jobId, "effect.intended", lease.owner, {
          key: effect.key,
          generation: lease.generation,
        });
        return toEffect(inserted);
      }
      const existing = this.st("SELECT * FROM effects WHERE key = ? AND generation = ?").get(
        effect.key,
        lease.generation,
      ) as EffectRow;
      if (existing.state === "intended" || existing.state === "failed") {
        const again = this.st(
          `UPDATE effects SET state = 'intended', attempts = attempts + 1, detail = COALESCE(?, detail), updated_at = ?
           WHERE key = ? AND generation = ? RETURNING *`,
        ).get(json(effect.detail), now, effect.key, lease.generation) as EffectRow;
        this.event(lease.jobId, "effect.intended", lease.owner, {
          key: effect.key,
          generation: lease.generation,
          attempt: again.attempts,
          previous: existing.state,
        });
        return toEffect(again);
      }
      return toEffect(existing);
    });
  }

  async settle(
    lease: Lease,
    key: string,
    state: EffectState,
    detail?: Record<string, unknown>,
  ): Promise<void> {
    await this.write(() => {
      this.held(lease);
      const r = this.st(
        `UPDATE effects SET state = ?, detail = COALESCE(?, detail), updated_at = ? WHERE key = ? AND generation = ?`,
      ).run(state, json(detail), this.clock.now(), key, lease.generation);
      if (r.changes === 0) {
        throw new IdemError(
          "INVALID_STATE",
          `effect ${key} has no intent in generation ${lease.generation}`,
        );
      }
      this.event(lease.jobId, `effect.${state}`, lease.owner, {
        key,
        generation: lease.generation,
        detail,
      });
    });
  }

  async effects(jobId: string, generation?: number): Promise<EffectRecord[]> {
    const rows = (
      generation === undefined
        ? this.st("SELECT * FROM effects WHERE job_id = ? ORDER BY generation, idx").all(jobId)
        : this.st("SELECT * FROM effects WHERE job_id = ? AND generation = ? ORDER BY idx").all(
            jobId,
            generation,
          )
    ) as EffectRow[];
    return rows.map(toEffect);
  }

  async effectHistory(key: string): Promise<EffectRecord[]> {
    return (
      this.st("SELECT * FROM effects WHERE key = ? ORDER BY generation").all(key) as EffectRow[]
    ).map(toEffect);
  }

  async resolve(
    jobId: string,
    decision: "applied" | "skipped",
    reason: string,
    actor: string,
  ): Promise<EffectRecord> {
    if (reason.trim() === "")
      throw new IdemError("INVALID_INPUT", "a resolution needs a reason", {
        details: { field: "reason" },
      });
    return this.write(() => {
      const run = this.st(
        "SELECT * FROM runs WHERE job_id = ? ORDER BY generation DESC LIMIT 1",
      ).get(jobId) as RunRow | undefined;
      if (!run) throw new IdemError("NOT_FOUND", `no run for job ${jobId}`);
      if (run.state !== "dead") {
        throw new IdemError(
          "INVALID_STATE",
          `the latest run of ${jobId} is ${run.state}, not dead: nothing to resolve`,
        );
      }
      const pick = (state: EffectState) =>
        this.st(
          "SELECT * FROM effects WHERE job_id = ? AND generation = ? AND state = ? ORDER BY idx LIMIT 1",
        ).get(jobId, run.generation, state) as EffectRow | undefined;
      const effect = pick("uncertain") ?? pick("failed") ?? pick("intended");
      if (!effect) {
        throw new IdemError(
          "INVALID_STATE",
          `run ${jobId}#${run.generation} has no uncertain or failed effect; use dlq retry`,
        );
      }
      const now = this.clock.now();
      const updated = this.st(
        "UPDATE effects SET state = ?, detail = ?, updated_at = ? WHERE key = ? AND generation = ? RETURNING *",
      ).get(
        decision,
        JSON.stringify({
          ...(effect.detail ? JSON.parse(effect.detail) : {}),
          resolvedBy: actor,
          reason,
        }),
        now,
        effect.key,
        run.generation,
      ) as EffectRow;
      this.event(jobId, "effect.resolved", actor, {
        key: effect.key,
        generation: run.generation,
        decision,
        reason,
        previous: effect.state,
      });
      const unsettled = this.st(
        "SELECT COUNT(*) AS n FROM effects WHERE job_id = ? AND generation = ? AND state IN ('uncertain')",
      ).get(jobId, run.generation) as { n: number };
      if (unsettled.n === 0) {
        this.st(
          `UPDATE runs SET state = 'pending', due_at = ?, attempts = 0, lease_expiries = 0, next_at = NULL,
           last_error = NULL, class = NULL, updated_at = ? WHERE id = ?`,
        ).run(now, now, run.id);
        this.activate(run.id, JSON.parse(run.targets) as string[]);
        this.event(jobId, "run.resumed", actor, { generation: run.generation });
      }
      return toEffect(updated);
    });
  }

  // --- events --------------------------------------------------------------------------------

  async appendEvent(event: {
    jobId: string | null;
    type: string;
    data?: Record<string, unknown>;
    actor: string;
  }): Promise<void> {
    return this.batched(() => this.event(event.jobId, event.type, event.actor, event.data));
  }

  private async listEvents(
    filter: { jobId?: string; since?: number; type?: string; limit?: number } = {},
  ): Promise<EventRecord[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.jobId !== undefined) {
      where.push("job_id = ?");
      args.push(filter.jobId);
    }
    if (filter.since !== undefined) {
      where.push("at >= ?");
      args.push(filter.since);
    }
    if (filter.type !== undefined) {
      where.push("type = ?");
      args.push(filter.type);
    }
    const rows = this.db
      .prepare(
        `SELECT * FROM events ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id
         ${filter.limit !== undefined ? `LIMIT ${Math.max(0, Math.floor(filter.limit))}` : ""}`,
      )
      .all(...args) as {
      id: number;
      at: number;
      job_id: string | null;
      type: string;
      data: string | null;
      actor: string;
    }[];
    return rows.map((r) => ({
      id: r.id,
      at: r.at,
      jobId: r.job_id,
      type: r.type,
      data: r.data === null ? null : (JSON.parse(r.data) as Record<string, unknown>),
      actor: r.actor,
    }));
  }

  async countEvents(types: readonly string[], since?: number): Promise<Record<string, number>> {
    const out: Record<string, number> = Object.fromEntries(types.map((t) => [t, 0]));
    const s = this.st("SELECT COUNT(*) AS n FROM events WHERE type = ? AND at >= ?");
    for (const t of types) out[t] = (s.get(t, since ?? 0) as { n: number }).n;
    return out;
  }

  // --- jobs ----------------------------------------------------------------------------------

  async enqueueJob(
    job: Job,
    options: { actor?: string; durable?: boolean } = {},
  ): Promise<EnqueueResult> {
    const { input, hash } = jobInput(job);
    return this.batched(() => {
      const now = this.clock.now();
      const created = job.createdAt === undefined ? now : Date.parse(job.createdAt);
      const seq = insertedRowid(
        this.st(
          `INSERT INTO jobs (job_id, agent, input_hash, state, due_at, created_at, updated_at)
           VALUES (?, ?, ?, 'queued', ?, ?, ?) ON CONFLICT(job_id) DO NOTHING`,
        ).run(job.jobId, job.agent, hash, now, created, now),
      );
      if (seq !== undefined) {
        this.insertJobInput(seq, input);
        return { status: "enqueued", jobId: job.jobId, seq };
      }
      const existing = this.st("SELECT seq, input_hash FROM jobs WHERE job_id = ?").get(
        job.jobId,
      ) as {
        seq: number;
        input_hash: string;
      };
      if (existing.input_hash !== hash) {
        this.event(job.jobId, "job.conflict", options.actor ?? "enqueue", {
          inputHash: hash,
          existingHash: existing.input_hash,
        });
        return { status: "conflict", jobId: job.jobId };
      }
      return { status: "duplicate", jobId: job.jobId, seq: existing.seq };
    }, options.durable ?? true);
  }

  private insertJobInput(seq: number, input: string): void {
    this.st("INSERT INTO job_inputs (seq, input) VALUES (?, ?)").run(seq, input);
  }

  async getJob(jobId: string): Promise<JobRecord | undefined> {
    const r = this.st(`${JOB_WITH_INPUT} WHERE job_id = ?`).get(jobId) as
      | JobRowWithInput
      | undefined;
    return r && toJob(r);
  }

  async setJobStreamSeq(
    jobId: string,
    seq: number,
    event?: { type: string; data?: Record<string, unknown>; actor: string },
  ): Promise<void> {
    return this.batched(() => {
      this.st("UPDATE jobs SET stream_seq = ?, updated_at = ? WHERE job_id = ?").run(
        seq,
        this.clock.now(),
        jobId,
      );
      if (event) this.event(jobId, event.type, event.actor, event.data);
    }, false); // a note for the outbox republish, which dedups by msg id: no fsync of its own
  }

  /** Leases `row` (read in this transaction) to `owner`; `input` is the job's, parsed. */
  private leaseJob(
    row: JobRow,
    owner: string,
    leaseMs: number,
    now: number,
    input: unknown,
    /** The delivery's stream sequence; the row's own when not given. */
    streamSeq: number | null = row.stream_seq,
  ): { lease: JobLease; job: JobRecord } {
    const token = this.ids();
    const until = now + leaseMs;
    this.st(
      `UPDATE jobs SET state = 'running', lease_owner = ?, lease_token = ?, lease_until = ?, due_at = ?,
       deliveries = deliveries + 1, stream_seq = ?, updated_at = ? WHERE seq = ?`,
    ).run(owner, token, until, until, streamSeq, now, row.seq);
    const updated: JobRow = {
      ...row,
      stream_seq: streamSeq,
      state: "running",
      lease_owner: owner,
      lease_token: token,
      lease_until: until,
      deliveries: row.deliveries + 1,
      updated_at: now,
    };
    return {
      lease: { jobId: row.job_id, token, owner, until, deliveries: updated.deliveries },
      job: jobRecord(updated, input),
    };
  }

  async claimNextJob(options: {
    owner: string;
    leaseMs: number;
    agents?: readonly string[];
    maxDeliver?: number;
    onDeadLettered?: (jobIds: string[]) => void;
  }): Promise<{ lease: JobLease; job: JobRecord } | undefined> {
    if (
      !this.st(
        "SELECT 1 FROM jobs WHERE state IN ('queued','running') AND due_at <= ? LIMIT 1",
      ).get(this.clock.now())
    ) {
      return undefined;
    }
    const deadLettered: string[] = [];
    const claimed = await this.write(() => {
      const now = this.clock.now();
      const agents = options.agents;
      for (;;) {
        const row = (
          agents === undefined
            ? this.st(
                `${JOB_WITH_INPUT} WHERE state IN ('queued','running') AND due_at <= ? ORDER BY due_at, jobs.seq LIMIT 1`,
              ).get(now)
            : this.db
                .prepare(
                  `${JOB_WITH_INPUT} WHERE state IN ('queued','running') AND due_at <= ?
                   AND agent IN (${agents.map(() => "?").join(",") || "NULL"}) ORDER BY due_at, jobs.seq LIMIT 1`,
                )
                .get(now, ...agents)
        ) as JobRowWithInput | undefined;
        if (!row) return undefined;
        if (this.st("SELECT 1 FROM outputs WHERE job_id = ?").get(row.job_id)) {
          this.st(
            "UPDATE jobs SET state = 'done', due_at = NULL, updated_at = ? WHERE seq = ?",
          ).run(now, row.seq);
          continue;
        }
        if (options.maxDeliver !== undefined && row.deliveries >= options.maxDeliver) {
          this.deadLetterRow(
            row,
            {
              class: row.state === "running" ? "infrastructure" : (row.last_class ?? "transient"),
              error: row.last_error ?? `lease expired after ${row.deliveries} deliveries`,
              deliveries: row.deliveries,
            },
            options.owner,
          );
          deadLettered.push(row.job_id);
          continue;
        }
        return this.leaseJob(
          row,
          options.owner,
          options.leaseMs,
          now,
          JSON.parse(row.input) as unknown,
        );
      }
    }, false);
    if (deadLettered.length > 0) options.onDeadLettered?.(deadLettered);
    return claimed;
  }

  async claimJob(
    job: Job,
    options: { owner: string; leaseMs: number; streamSeq?: number },
  ): Promise<JobClaimResult> {
    const { input, hash } = jobInput(job);
    const claim = await this.batched((): JobClaimResult => {
      const now = this.clock.now();
      // One statement: whether the output is recorded, and the jobs row, not its input in
      // job_inputs (the caller's job holds it: same hash, or a conflict).
      const found = this.st(
        `SELECT EXISTS (SELECT 1 FROM outputs WHERE job_id = ?) AS recorded, jobs.*
         FROM (SELECT 1) LEFT JOIN jobs ON jobs.job_id = ?`,
      ).get(job.jobId, job.jobId) as Omit<JobRow, "seq"> & { seq: number | null; recorded: 0 | 1 };
      if (found.recorded === 1) return { status: "recorded" };
      let row = found.seq === null ? undefined : (found as JobRow);
      if (!row) {
        row = this.st(
          `INSERT INTO jobs (job_id, agent, input_hash, state, due_at, created_at, updated_at)
           VALUES (?, ?, ?, 'queued', ?, ?, ?) RETURNING *`,
        ).get(job.jobId, job.agent, hash, now, now, now) as JobRow;
        this.insertJobInput(row.seq, input);
      }
      if (row.input_hash !== hash) return { status: "conflict" };
      if (row.state === "dead") return { status: "dead" };
      if (row.state === "done") return { status: "recorded" };
      if (row.state === "running" && row.lease_until !== null && row.lease_until > now) {
        return { status: "held", until: row.lease_until };
      }
      const { lease, job: record } = this.leaseJob(
        row,
        options.owner,
        options.leaseMs,
        now,
        job.input,
        options.streamSeq,
      );
      return { status: "acquired", lease, job: record };
    }, false);
    // A delivery is acked on "recorded": durable first, as in `has`.
    if (claim.status === "recorded") await this.durable();
    return claim;
  }

  private heldJob(lease: JobLease): JobRow {
    const row = this.st("SELECT * FROM jobs WHERE job_id = ?").get(lease.jobId) as
      | JobRow
      | undefined;
    if (row?.state !== "running" || row.lease_token !== lease.token) {
      throw new IdemError("LEASE_LOST", `the claim on job ${lease.jobId} was taken over or ended`, {
        details: { jobId: lease.jobId, state: row?.state },
      });
    }
    return row;
  }

  async extendJobLease(lease: JobLease, leaseMs: number): Promise<JobLease> {
    return this.write(() => {
      this.heldJob(lease);
      const now = this.clock.now();
      const until = now + leaseMs;
      this.st("UPDATE jobs SET lease_until = ?, due_at = ?, updated_at = ? WHERE job_id = ?").run(
        until,
        until,
        now,
        lease.jobId,
      );
      return { ...lease, until };
    }, false);
  }

  async failJob(
    lease: JobLease,
    failure: { class: FailureClass; error: string; nextAt: number },
  ): Promise<void> {
    await this.write(() => {
      this.heldJob(lease);
      const now = this.clock.now();
      this.st(
        `UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = ?,
         next_at = ?, last_error = ?, last_class = ?, updated_at = ? WHERE job_id = ?`,
      ).run(failure.nextAt, failure.nextAt, failure.error, failure.class, now, lease.jobId);
      this.event(lease.jobId, "job.failed", lease.owner, {
        class: failure.class,
        error: failure.error,
        nextAt: failure.nextAt,
      });
    });
  }

  private deadLetterRow(
    row: JobRow | undefined,
    failure: { class: FailureClass; error: string; deliveries: number; agent?: string },
    actor: string,
    jobId = row?.job_id as string,
  ): void {
    const now = this.clock.now();
    if (row) {
      this.st(
        `UPDATE jobs SET state = 'dead', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = NULL,
         last_error = ?, updated_at = ? WHERE seq = ?`,
      ).run(failure.error, now, row.seq);
    }
    const inserted = this.st(
      `INSERT INTO dead_letters (job_id, agent, class, deliveries, last_error, at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(job_id) WHERE resolved_at IS NULL DO NOTHING`,
    ).run(
      jobId,
      failure.agent ?? row?.agent ?? null,
      failure.class,
      failure.deliveries,
      failure.error,
      now,
    );
    if (inserted.changes > 0) {
      this.event(jobId, "job.dead", actor, {
        class: failure.class,
        error: failure.error,
        deliveries: failure.deliveries,
      });
    }
  }

  async deadLetterJob(
    jobId: string,
    failure: { class: FailureClass; error: string; deliveries: number; agent?: string },
    lease?: JobLease,
  ): Promise<void> {
    await this.write(() => {
      if (lease) this.heldJob(lease);
      if (this.st("SELECT 1 FROM outputs WHERE job_id = ?").get(jobId)) return; // it did produce an output
      const row = this.st("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as JobRow | undefined;
      this.deadLetterRow(row, failure, lease?.owner ?? "executor", jobId);
    });
  }

  private async listDeadLetters(
    options: { unresolved?: boolean; since?: number } = {},
  ): Promise<DeadLetterRecord[]> {
    const rows = this.st(
      `SELECT * FROM dead_letters WHERE at >= ? ${options.unresolved ? "AND resolved_at IS NULL" : ""} ORDER BY id`,
    ).all(options.since ?? 0) as DeadLetterRow[];
    return rows.map(toDeadLetter);
  }

  async resolveDeadLetter(
    jobId: string,
    resolution: { action: "retry" | "dismiss"; actor: string; reason?: string },
  ): Promise<{ retries: number }> {
    return this.write(() => {
      const now = this.clock.now();
      const dl = this.st("SELECT * FROM dead_letters WHERE job_id = ? AND resolved_at IS NULL").get(
        jobId,
      ) as DeadLetterRow | undefined;
      if (!dl) throw new IdemError("NOT_FOUND", `job ${jobId} has no open dead letter`);
      this.st("UPDATE dead_letters SET resolved_at = ?, resolution = ? WHERE id = ?").run(
        now,
        JSON.stringify({
          action: resolution.action,
          actor: resolution.actor,
          reason: resolution.reason ?? null,
        }),
        dl.id,
      );
      let retries = 0;
      if (resolution.action === "retry") {
        const row = this.st(
          `UPDATE jobs SET state = 'queued', deliveries = 0, due_at = ?, next_at = NULL, lease_owner = NULL,
           lease_token = NULL, lease_until = NULL, retries = retries + 1, updated_at = ? WHERE job_id = ? RETURNING retries`,
        ).get(now, now, jobId) as { retries: number } | undefined;
        retries = row?.retries ?? 1;
      }
      this.event(jobId, `job.${resolution.action}`, resolution.actor, {
        reason: resolution.reason ?? null,
        retries,
      });
      return { retries };
    });
  }

  async pendingJobs(options: { since?: number; limit?: number } = {}): Promise<JobRecord[]> {
    const rows = this.st(
      // jobs_due holds exactly the queued and running jobs: the scan reads none that are done.
      `SELECT jobs.*, job_inputs.input FROM jobs INDEXED BY jobs_due JOIN job_inputs ON job_inputs.seq = jobs.seq
       WHERE state IN ('queued','running') AND created_at >= ?
       AND NOT EXISTS (SELECT 1 FROM outputs o WHERE o.job_id = jobs.job_id) ORDER BY jobs.seq LIMIT ?`,
    ).all(options.since ?? 0, options.limit ?? -1) as JobRowWithInput[];
    return rows.map(toJob);
  }

  // --- maintenance ---------------------------------------------------------------------------

  async prune(options: PruneOptions): Promise<PruneResult> {
    const before = options.before;
    const oldOutputs = this.st(
      `SELECT * FROM outputs o WHERE o.recorded_at < ?
       AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = o.job_id AND r.state IN ${ACTIVE}) ORDER BY seq`,
    ).all(before) as OutputRow[];
    const result: PruneResult = {
      outputs: oldOutputs.length,
      runs: 0,
      effects: 0,
      events: 0,
      rejections: 0,
      jobs: 0,
    };
    const job = (sql: string, id: string) => this.st(sql).all(id);
    for (const o of oldOutputs) {
      result.runs += (
        this.st("SELECT COUNT(*) AS n FROM runs WHERE job_id = ?").get(o.job_id) as { n: number }
      ).n;
      result.effects += (
        this.st("SELECT COUNT(*) AS n FROM effects WHERE job_id = ?").get(o.job_id) as { n: number }
      ).n;
      result.events += (
        this.st("SELECT COUNT(*) AS n FROM events WHERE job_id = ?").get(o.job_id) as { n: number }
      ).n;
      result.rejections += (
        this.st("SELECT COUNT(*) AS n FROM rejections WHERE job_id = ?").get(o.job_id) as {
          n: number;
        }
      ).n;
      result.jobs += (
        this.st("SELECT COUNT(*) AS n FROM jobs WHERE job_id = ?").get(o.job_id) as { n: number }
      ).n;
    }
    if (options.dryRun) return result;
    for (const o of oldOutputs) {
      // Archive first (the caller fsyncs it), then delete in one transaction per output.
      await options.archive?.({
        output: toOutput(o),
        runs: (
          job("SELECT * FROM runs WHERE job_id = ? ORDER BY generation", o.job_id) as RunRow[]
        ).map(toRun),
        effects: (
          job(
            "SELECT * FROM effects WHERE job_id = ? ORDER BY generation, idx",
            o.job_id,
          ) as EffectRow[]
        ).map(toEffect),
        events: await this.listEvents({ jobId: o.job_id }),
        rejections: await this.rejections(o.job_id),
        job: await this.getJob(o.job_id),
      });
      await this.write(() => {
        this.st("INSERT INTO prune_guard (id) VALUES (1)").run();
        this.st(
          "DELETE FROM active_targets WHERE run_id IN (SELECT id FROM runs WHERE job_id = ?)",
        ).run(o.job_id);
        for (const table of [
          "effects",
          "runs",
          "events",
          "rejections",
          "jobs",
          "dead_letters",
          "outputs",
        ]) {
          this.st(`DELETE FROM ${table} WHERE job_id = ?`).run(o.job_id);
        }
        this.st("DELETE FROM prune_guard").run();
      });
    }
    if (result.outputs > 0)
      this.event(null, "journal.pruned", options.actor ?? "prune", { ...result, before });
    return result;
  }

  async integrity(): Promise<string[]> {
    const problems: string[] = [];
    const check = this.db.pragma("integrity_check") as { integrity_check: string }[];
    for (const r of check)
      if (r.integrity_check !== "ok") problems.push(`integrity_check: ${r.integrity_check}`);
    const mode = this.db.pragma("journal_mode", { simple: true }) as string;
    if (mode !== "wal") problems.push(`journal_mode is ${mode}, expected wal`);
    const present = new Set(
      (
        this.st("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as { name: string }[]
      ).map((r) => r.name),
    );
    for (const t of TRIGGERS)
      if (!present.has(t)) problems.push(`trigger ${t} is missing: outputs are not protected`);
    const unsettled = this.st(
      `SELECT r.job_id, r.generation FROM runs r JOIN effects e ON e.job_id = r.job_id AND e.generation = r.generation
       WHERE r.state = 'done' AND e.state NOT IN ('applied','present','skipped') LIMIT 20`,
    ).all() as { job_id: string; generation: number }[];
    for (const u of unsettled)
      problems.push(`run ${u.job_id}#${u.generation} is done but has an unsettled effect`);
    const missingRuns = this.st(
      "SELECT o.job_id FROM outputs o WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = o.job_id) LIMIT 20",
    ).all() as { job_id: string }[];
    for (const m of missingRuns) problems.push(`output ${m.job_id} has no run`);
    const missingInputs = this.st(
      "SELECT j.job_id FROM jobs j WHERE NOT EXISTS (SELECT 1 FROM job_inputs i WHERE i.seq = j.seq) LIMIT 20",
    ).all() as { job_id: string }[];
    for (const m of missingInputs) problems.push(`job ${m.job_id} has no input`);
    return problems;
  }

  async backup(file: string): Promise<void> {
    await this.db.backup(file);
  }

  async close(): Promise<void> {
    await this.fsyncing;
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.walFd = undefined;
    if (this.db.open) this.db.close();
  }
}
