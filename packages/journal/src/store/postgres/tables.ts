import type { FailureClass } from "@idem/schema";
import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import type { EffectState, JobState, RunState } from "../../domain/states.js";
import type { OutputSource } from "../../port/outputs.js";

/**
 * The PostgreSQL journal's tables: the same tables, columns and indexes as the SQLite ones
 * (store/sqlite/tables.ts), so that rows read back as the same records. Times are milliseconds
 * since the epoch (bigint read as a number), written from the database's clock (`now()`) wherever a
 * lease or a due time is computed; JSON stays text, as the bytes were hashed.
 */
const ms = <N extends string>(name: N) => bigint(name, { mode: "number" });

/** Immutable agent outputs (triggers refuse UPDATE always and DELETE outside a prune). */
export const outputs = pgTable(
  "outputs",
  {
    seq: bigserial("seq", { mode: "number" }).primaryKey(),
    jobId: text("job_id").notNull().unique(),
    agent: text("agent").notNull(),
    contentHash: text("content_hash").notNull(),
    body: text("body").notNull(),
    source: text("source").notNull().$type<OutputSource>(),
    recordedAt: ms("recorded_at").notNull(),
    /** The W3C trace context the output was recorded under, or null; never hashed. */
    traceparent: text("traceparent"),
  },
  (t) => [index("outputs_recorded_at").on(t.recordedAt)],
);

/** Conflicting submissions for a recorded job ID, kept as evidence. */
export const rejections = pgTable(
  "rejections",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    jobId: text("job_id").notNull(),
    contentHash: text("content_hash").notNull(),
    body: text("body").notNull(),
    source: text("source").notNull(),
    at: ms("at").notNull(),
  },
  (t) => [index("rejections_job").on(t.jobId)],
);

/** One interpretation of one output; `due_at` as on SQLite, the partial index over active runs. */
export const runs = pgTable(
  "runs",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    jobId: text("job_id").notNull(),
    generation: integer("generation").notNull(),
    state: text("state").notNull().$type<RunState>(),
    dueAt: ms("due_at"),
    leaseOwner: text("lease_owner"),
    leaseToken: text("lease_token"),
    leaseUntil: ms("lease_until"),
    attempts: integer("attempts").notNull().default(0),
    leaseExpiries: integer("lease_expiries").notNull().default(0),
    nextAt: ms("next_at"),
    lastError: text("last_error"),
    class: text("class").$type<FailureClass>(),
    forceUnprobeable: integer("force_unprobeable").notNull().default(0),
    targets: text("targets").notNull().default("[]"),
    /** A replay's effect filter (JSON), null: every effect (migration 0007 / pg 0002). */
    effectFilter: text("effect_filter"),
    /** A replay's lineage (JSON: actor, reason, selection, replaysGeneration), null: not a replay. */
    replay: text("replay"),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("runs_job_generation").on(t.jobId, t.generation),
    index("runs_due").on(t.dueAt, t.id).where(sql`state IN ('pending','running','failed')`),
  ],
);

/** The targets of active runs, one row per (target, run): the per-target recording order. */
export const activeTargets = pgTable(
  "active_targets",
  {
    target: text("target").notNull(),
    runId: bigint("run_id", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.target, t.runId] })],
);

/** The effects ledger: one row per (key, generation). */
export const effects = pgTable(
  "effects",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    key: text("key").notNull(),
    generation: integer("generation").notNull(),
    jobId: text("job_id").notNull(),
    idx: integer("idx").notNull(),
    kind: text("kind").notNull(),
    specHash: text("spec_hash").notNull(),
    state: text("state").notNull().$type<EffectState>(),
    detail: text("detail"),
    attempts: integer("attempts").notNull().default(0),
    updatedAt: ms("updated_at").notNull(),
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

/** The queue and outbox of jobs: their state, which every delivery rewrites (the input is apart). */
export const jobs = pgTable(
  "jobs",
  {
    seq: bigserial("seq", { mode: "number" }).primaryKey(),
    jobId: text("job_id").notNull().unique(),
    agent: text("agent").notNull(),
    inputHash: text("input_hash").notNull(),
    state: text("state").notNull().$type<JobState>(),
    dueAt: ms("due_at"),
    deliveries: integer("deliveries").notNull().default(0),
    leaseOwner: text("lease_owner"),
    leaseToken: text("lease_token"),
    leaseUntil: ms("lease_until"),
    nextAt: ms("next_at"),
    streamSeq: ms("stream_seq"),
    lastError: text("last_error"),
    lastClass: text("last_class").$type<FailureClass>(),
    retries: integer("retries").notNull().default(0),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [index("jobs_due").on(t.dueAt, t.seq).where(sql`state IN ('queued','running')`)],
);

/** A job's input (canonical JSON) and trace context, written once with its `jobs` row (same seq). */
export const jobInputs = pgTable("job_inputs", {
  seq: bigint("seq", { mode: "number" }).primaryKey(),
  input: text("input").notNull(),
  traceparent: text("traceparent"),
});

/** Jobs that never produced an output. */
export const deadLetters = pgTable(
  "dead_letters",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    jobId: text("job_id").notNull(),
    agent: text("agent"),
    class: text("class").notNull().$type<FailureClass>(),
    deliveries: integer("deliveries").notNull(),
    lastError: text("last_error").notNull(),
    at: ms("at").notNull(),
    resolvedAt: ms("resolved_at"),
    resolution: text("resolution"),
  },
  (t) => [
    index("dead_letters_job").on(t.jobId),
    uniqueIndex("dead_letters_open").on(t.jobId).where(sql`resolved_at IS NULL`),
    index("dead_letters_at").on(t.at),
  ],
);

/** Append-only log of every transition. */
export const events = pgTable(
  "events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    at: ms("at").notNull(),
    jobId: text("job_id"),
    type: text("type").notNull(),
    data: text("data"),
    actor: text("actor").notNull(),
  },
  (t) => [index("events_job").on(t.jobId, t.id)],
);

/** A row here, inside a prune's own transaction (invisible to every other), lets the triggers allow DELETE. */
export const pruneGuard = pgTable("prune_guard", {
  id: integer("id").primaryKey(),
});
