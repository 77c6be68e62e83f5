import type { Table } from "drizzle-orm";
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

export { toOutput } from "../../domain/output-damage.js";
export {
  jobRecord,
  toDeadLetter,
  toEffect,
  toEvent,
  toJob,
  toJobEntry,
  toRejection,
  toRun,
} from "../../domain/records.js";

/** Jobs rows with their inputs, as `jobs`: where clauses name the jobs columns unqualified. */
export const JOB_WITH_INPUT =
  "SELECT jobs.*, job_inputs.input, job_inputs.traceparent FROM jobs JOIN job_inputs ON job_inputs.seq = jobs.seq";
