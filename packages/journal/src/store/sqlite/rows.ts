import type { AgentOutput } from "@idem/schema";
import type { Table } from "drizzle-orm";
import type { DeadLetterRecord } from "../../port/dead-letters.js";
import type { EventRecord } from "../../port/events.js";
import type { JobRecord } from "../../port/jobs.js";
import type { EffectRecord } from "../../port/ledger.js";
import type { OutputRecord, RejectionRecord } from "../../port/outputs.js";
import type { RunRecord } from "../../port/runs.js";
import type * as tables from "./tables.js";

/**
 * A row of `table` as raw SQL returns it: keyed by column name (`job_id`), typed by the drizzle
 * table's `$inferSelect`. Row types are never written by hand: they follow tables.ts.
 */
export type RowOf<T extends Table> = {
  [K in keyof T["_"]["columns"] as T["_"]["columns"][K]["_"]["name"]]: T["$inferSelect"][K &
    keyof T["$inferSelect"]];
};

/** An `outputs` row. */
export type OutputRow = RowOf<typeof tables.outputs>;
/** A `runs` row. */
export type RunRow = RowOf<typeof tables.runs>;
/** An `effects` row. */
export type EffectRow = RowOf<typeof tables.effects>;
/** A `jobs` row. */
export type JobRow = RowOf<typeof tables.jobs>;
/** A `jobs` row with its input and trace context from job_inputs (JOB_WITH_INPUT). */
export type JobRowWithInput = JobRow &
  Pick<RowOf<typeof tables.jobInputs>, "input" | "traceparent">;
/** A `dead_letters` row. */
export type DeadLetterRow = RowOf<typeof tables.deadLetters>;
/** An `events` row. */
export type EventRow = RowOf<typeof tables.events>;
/** A `rejections` row. */
export type RejectionRow = RowOf<typeof tables.rejections>;

/** An output record from its row (the body parsed). */
export const toOutput = (r: OutputRow): OutputRecord => ({
  seq: r.seq,
  jobId: r.job_id,
  agent: r.agent,
  contentHash: r.content_hash,
  output: JSON.parse(r.body) as AgentOutput,
  source: r.source,
  recordedAt: r.recorded_at,
  ...(r.traceparent === null ? {} : { traceparent: r.traceparent }),
});
/** A run record from its row (targets parsed, force_unprobeable as a boolean). */
export const toRun = (r: RunRow): RunRecord => ({
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
/** An effect record from its row (detail parsed). */
export const toEffect = (r: EffectRow): EffectRecord => ({
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
/** A job record from a jobs row joined with its input and trace context. */
export const toJob = (r: JobRowWithInput): JobRecord =>
  jobRecord(r, JSON.parse(r.input) as unknown, r.traceparent);
/** A job record from a jobs row, its parsed input and its trace context (null: none). */
export const jobRecord = (
  r: JobRow,
  input: unknown,
  traceparent: string | null | undefined,
): JobRecord => ({
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
  ...(traceparent == null ? {} : { traceparent }),
});
/** A dead-letter record from its row. */
export const toDeadLetter = (r: DeadLetterRow): DeadLetterRecord => ({
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
/** An event record from its row (data parsed). */
export const toEvent = (r: EventRow): EventRecord => ({
  id: r.id,
  at: r.at,
  jobId: r.job_id,
  type: r.type,
  data: r.data === null ? null : (JSON.parse(r.data) as Record<string, unknown>),
  actor: r.actor,
});
/** A rejection record from its row. */
export const toRejection = (r: RejectionRow): RejectionRecord => ({
  jobId: r.job_id,
  contentHash: r.content_hash,
  body: r.body,
  source: r.source,
  at: r.at,
});

/** Jobs rows with their inputs, as `jobs`: where clauses name the jobs columns unqualified. */
export const JOB_WITH_INPUT =
  "SELECT jobs.*, job_inputs.input, job_inputs.traceparent FROM jobs JOIN job_inputs ON job_inputs.seq = jobs.seq";
