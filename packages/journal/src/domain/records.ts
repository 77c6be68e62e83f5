import type { FailureClass } from "@idem/schema";
import type { DeadLetterRecord } from "../port/dead-letters.js";
import type { EventRecord } from "../port/events.js";
import type { JobEntry, JobRecord } from "../port/jobs.js";
import type { EffectRecord } from "../port/ledger.js";
import type { OutputSource, RejectionRecord, ReplaySelection } from "../port/outputs.js";
import type { EffectFilter, ReplayLineage, ReplayOptions, RunRecord } from "../port/runs.js";
import type { EffectState, JobState, RunState } from "./states.js";

/**
 * Rows to records, the same for every adapter: a row is keyed by column name as raw SQL returns it
 * (`job_id`), times in epoch milliseconds, JSON as text. Each adapter's rows (inferred from its
 * drizzle tables) must fit these shapes, which the type checker holds them to where they are passed.
 */

/** The columns of an `outputs` row the records read. */
export interface OutputRowShape {
  seq: number;
  job_id: string;
  agent: string;
  content_hash: string;
  body: string;
  source: OutputSource;
  recorded_at: number;
  traceparent: string | null;
}
/** A `runs` row. */
export interface RunRowShape {
  id: number;
  job_id: string;
  generation: number;
  state: RunState;
  attempts: number;
  lease_expiries: number;
  lease_owner: string | null;
  lease_until: number | null;
  next_at: number | null;
  last_error: string | null;
  class: FailureClass | null;
  force_unprobeable: number;
  targets: string;
  effect_filter: string | null;
  replay: string | null;
  created_at: number;
  updated_at: number;
}
/** An `effects` row. */
export interface EffectRowShape {
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
/** A `jobs` row. */
export interface JobRowShape {
  job_id: string;
  agent: string;
  input_hash: string;
  state: JobState;
  deliveries: number;
  lease_owner: string | null;
  lease_until: number | null;
  next_at: number | null;
  stream_seq: number | null;
  last_error: string | null;
  last_class: FailureClass | null;
  created_at: number;
  updated_at: number;
}
/** A `jobs` row joined with its `job_inputs` row. */
export type JobRowWithInputShape = JobRowShape & { input: string; traceparent: string | null };
/** A `dead_letters` row. */
export interface DeadLetterRowShape {
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
/** An `events` row. */
export interface EventRowShape {
  id: number;
  at: number;
  job_id: string | null;
  type: string;
  data: string | null;
  actor: string;
}
/** A `rejections` row. */
export interface RejectionRowShape {
  job_id: string;
  content_hash: string;
  body: string;
  source: string;
  at: number;
}

/** A run record from its row (targets, filter and lineage parsed, force_unprobeable as a boolean). */
export const toRun = (r: RunRowShape): RunRecord => {
  // `== null`: a journal opened read-only before migration 0007 has no such columns (undefined).
  const only = r.effect_filter == null ? null : (JSON.parse(r.effect_filter) as EffectFilter);
  return {
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
    only,
    replay:
      r.replay == null ? null : { ...(JSON.parse(r.replay) as Omit<ReplayLineage, "only">), only },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
};

/**
 * The `runs` columns a replay writes: `effect_filter` (the filter, or null) and `replay` (the
 * lineage without the filter, which `toRun` puts back from `effect_filter`).
 */
export const replayColumns = (
  lineage: ReplayLineage,
): { effect_filter: string | null; replay: string } => {
  const { only, ...rest } = lineage;
  return {
    effect_filter: only === null ? null : JSON.stringify(only),
    replay: JSON.stringify(rest),
  };
};
/** An effect record from its row (detail parsed). */
export const toEffect = (r: EffectRowShape): EffectRecord => ({
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
export const toJob = (r: JobRowWithInputShape): JobRecord =>
  jobRecord(r, JSON.parse(r.input) as unknown, r.traceparent);
/** A job as a listing shows it (no input, no trace context), from its jobs row. */
export const toJobEntry = (r: JobRowShape): JobEntry => ({
  jobId: r.job_id,
  agent: r.agent,
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
/** A job record from a jobs row, its parsed input and its trace context (null: none). */
export const jobRecord = (
  r: JobRowShape,
  input: unknown,
  traceparent: string | null | undefined,
): JobRecord => ({
  ...toJobEntry(r),
  input,
  ...(traceparent == null ? {} : { traceparent }),
});
/** A dead-letter record from its row. */
export const toDeadLetter = (r: DeadLetterRowShape): DeadLetterRecord => ({
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
export const toEvent = (r: EventRowShape): EventRecord => ({
  id: r.id,
  at: r.at,
  jobId: r.job_id,
  type: r.type,
  data: r.data === null ? null : (JSON.parse(r.data) as Record<string, unknown>),
  actor: r.actor,
});
/** A rejection record from its row. */
export const toRejection = (r: RejectionRowShape): RejectionRecord => ({
  jobId: r.job_id,
  contentHash: r.content_hash,
  body: r.body,
  source: r.source,
  at: r.at,
});

/**
 * The lineage a replay records with the generation after `replaysGeneration`: the operator's
 * selection when given (else the one replayed), the reason as given (null: none), the filter with
 * its empty lists dropped (null: every effect).
 */
export const replayLineage = (
  selection: ReplaySelection,
  options: ReplayOptions,
  replaysGeneration: number,
): ReplayLineage => ({
  actor: options.actor,
  reason: options.reason ?? null,
  selection: options.selection ?? selection,
  only: normalFilter(options.only),
  replaysGeneration,
});

/** A filter without its empty lists; null when nothing is left (every effect). */
export function normalFilter(only: EffectFilter | null | undefined): EffectFilter | null {
  if (!only) return null;
  const out: EffectFilter = {};
  for (const k of ["kinds", "repos", "roots", "targets"] as const) {
    const list = only[k];
    if (list && list.length > 0) out[k] = [...list];
  }
  return Object.keys(out).length === 0 ? null : out;
}

/**
 * The ordering targets of an output's new generation: the ones the replay gives for it, else
 * `fullTargets`, the targets of all its effects as stored (JSON: its latest unfiltered run's, since
 * a filtered run orders on its own effects only), else none.
 */
export const replayTargets = (
  options: Pick<ReplayOptions, "targets">,
  jobId: string,
  fullTargets: string | undefined,
): readonly string[] => {
  const given = options.targets;
  if (given && Object.hasOwn(given, jobId)) return given[jobId] as readonly string[];
  return fullTargets === undefined ? [] : (JSON.parse(fullTargets) as string[]);
};
