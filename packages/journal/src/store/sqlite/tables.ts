import type { FailureClass } from "@idem/schema";
import { sql } from "drizzle-orm";
import {
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import type { EffectState, JobState, RunState } from "../../domain/states.js";
import type { OutputSource } from "../../port/outputs.js";

/** Immutable agent outputs (triggers refuse UPDATE always and DELETE outside a prune). */
export const outputs = sqliteTable(
  "outputs",
  {
    seq: integer("seq").primaryKey(),
    jobId: text("job_id").notNull().unique(),
    agent: text("agent").notNull(),
    contentHash: text("content_hash").notNull(),
    body: text("body").notNull(),
    source: text("source").notNull().$type<OutputSource>(),
    recordedAt: integer("recorded_at").notNull(),
    /**
     * The W3C trace context the output was recorded under (migration 0006), or null. Kept with the
     * record, first write wins, but no part of its content: not hashed, never a conflict.
     */
    traceparent: text("traceparent"),
  },
  (t) => [index("outputs_recorded_at").on(t.recordedAt)],
);

/** Conflicting submissions for a recorded job ID, kept as evidence. */
export const rejections = sqliteTable(
  "rejections",
  {
    id: integer("id").primaryKey(),
    jobId: text("job_id").notNull(),
    contentHash: text("content_hash").notNull(),
    body: text("body").notNull(),
    source: text("source").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("rejections_job").on(t.jobId)],
);

/**
 * One interpretation of one output. `due_at` is when the run next needs a worker: pending -> its
 * creation, failed -> next_at, running -> lease_until. The partial index over active runs keeps the
 * claim independent of history length.
 */
export const runs = sqliteTable(
  "runs",
  {
    id: integer("id").primaryKey(),
    jobId: text("job_id").notNull(),
    generation: integer("generation").notNull(),
    state: text("state").notNull().$type<RunState>(),
    dueAt: integer("due_at"),
    leaseOwner: text("lease_owner"),
    leaseToken: text("lease_token"),
    leaseUntil: integer("lease_until"),
    attempts: integer("attempts").notNull().default(0),
    leaseExpiries: integer("lease_expiries").notNull().default(0),
    nextAt: integer("next_at"),
    lastError: text("last_error"),
    class: text("class").$type<FailureClass>(),
    forceUnprobeable: integer("force_unprobeable").notNull().default(0),
    targets: text("targets").notNull().default("[]"),
    /** A replay's effect filter (JSON), null: every effect (migration 0007 / pg 0002). */
    effectFilter: text("effect_filter"),
    /** A replay's lineage (JSON: actor, reason, selection, replaysGeneration), null: not a replay. */
    replay: text("replay"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("runs_job_generation").on(t.jobId, t.generation),
    index("runs_due").on(t.dueAt, t.id).where(sql`state IN ('pending','running','failed')`),
  ],
);

/**
 * The targets of active runs (pending, running, failed), one row per (target, run): a run is
 * claimable only when it is first on each of its targets. Rows leave when the run is done or dead,
 * so the table holds only the runs in flight. WITHOUT ROWID (migration 0003): one b-tree, so a
 * record dirties one page here, not three.
 */
export const activeTargets = sqliteTable(
  "active_targets",
  {
    target: text("target").notNull(),
    runId: integer("run_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.target, t.runId] })],
);

/** The effects ledger: one row per (key, generation). */
export const effects = sqliteTable(
  "effects",
  {
    id: integer("id").primaryKey(),
    key: text("key").notNull(),
    generation: integer("generation").notNull(),
    jobId: text("job_id").notNull(),
    idx: integer("idx").notNull(),
    kind: text("kind").notNull(),
    specHash: text("spec_hash").notNull(),
    state: text("state").notNull().$type<EffectState>(),
    detail: text("detail"),
    attempts: integer("attempts").notNull().default(0),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("effects_key_generation").on(t.key, t.generation),
    index("effects_job").on(t.jobId, t.generation, t.idx),
    // The applied effects by the time they were applied (migration 0008 / pg 0003): the console's
    // chart counts them per minute over a window without reading the ledger's history. Partial, so
    // only the one write that settles an effect as applied adds an entry.
    index("effects_applied").on(t.updatedAt).where(sql`state = 'applied'`),
  ],
);

/**
 * The queue (embedded transport) and outbox (JetStream) of jobs: their state, which every delivery
 * rewrites. The input, which never changes, is in `job_inputs`, so that a state transition rewrites
 * a row of about 150 bytes and not one that carries the input.
 */
export const jobs = sqliteTable(
  "jobs",
  {
    seq: integer("seq").primaryKey(),
    jobId: text("job_id").notNull().unique(),
    agent: text("agent").notNull(),
    inputHash: text("input_hash").notNull(),
    state: text("state").notNull().$type<JobState>(),
    dueAt: integer("due_at"),
    deliveries: integer("deliveries").notNull().default(0),
    leaseOwner: text("lease_owner"),
    leaseToken: text("lease_token"),
    leaseUntil: integer("lease_until"),
    nextAt: integer("next_at"),
    streamSeq: integer("stream_seq"),
    lastError: text("last_error"),
    lastClass: text("last_class").$type<FailureClass>(),
    retries: integer("retries").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  // No index on created_at (dropped in migration 0005): every enqueue paid for it, and its one
  // reader, the outbox republish, reads only queued and running jobs, which jobs_due holds.
  (t) => [index("jobs_due").on(t.dueAt, t.seq).where(sql`state IN ('queued','running')`)],
);

/**
 * A job's input (canonical JSON), written once with its `jobs` row (same seq), never changed, and
 * the W3C trace context it was enqueued under (migration 0006): immutable like the input, so the
 * state rewrites of `jobs` never copy it. Not part of the input hash.
 */
export const jobInputs = sqliteTable("job_inputs", {
  seq: integer("seq").primaryKey(),
  input: text("input").notNull(),
  traceparent: text("traceparent"),
});

/** Jobs that never produced an output. */
export const deadLetters = sqliteTable(
  "dead_letters",
  {
    id: integer("id").primaryKey(),
    jobId: text("job_id").notNull(),
    agent: text("agent"),
    class: text("class").notNull().$type<FailureClass>(),
    deliveries: integer("deliveries").notNull(),
    lastError: text("last_error").notNull(),
    at: integer("at").notNull(),
    resolvedAt: integer("resolved_at"),
    resolution: text("resolution"),
  },
  (t) => [
    index("dead_letters_job").on(t.jobId),
    uniqueIndex("dead_letters_open").on(t.jobId).where(sql`resolved_at IS NULL`),
    index("dead_letters_at").on(t.at),
  ],
);

/** Append-only log of every transition. */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey(),
    at: integer("at").notNull(),
    jobId: text("job_id"),
    type: text("type").notNull(),
    data: text("data"),
    actor: text("actor").notNull(),
  },
  (t) => [index("events_job").on(t.jobId, t.id)],
);

/** A row here, inside a prune's own transaction, lets the triggers allow DELETE. */
export const pruneGuard = sqliteTable("prune_guard", {
  id: integer("id").primaryKey(),
});
