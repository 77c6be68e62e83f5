/**
 * The journal's tables that hold state, as the copy moves them: every column in one order (the
 * order of a row as it is hashed on both sides), each column's PostgreSQL type for the `unnest`
 * of a batch, the primary key the copy pages and resumes by, and the identity column whose
 * sequence is set past the copied ids. `prune_guard` (empty outside a prune) and the migrations
 * table are not state and are not copied.
 */

/** A column's type on PostgreSQL: SQLite's INTEGER is bigint or integer there, TEXT is text. */
export type CopyColumnType = "bigint" | "integer" | "text";

export interface CopyTable {
  readonly name: string;
  readonly columns: readonly (readonly [name: string, type: CopyColumnType])[];
  /** The primary key's columns, in key order (text columns compare by bytes on both sides). */
  readonly key: readonly string[];
  /** The bigserial column whose sequence must continue after the copied ids, if any. */
  readonly serial?: string;
}

const B = "bigint" as const;
const I = "integer" as const;
const T = "text" as const;

/** Every table that holds state, in the order they are copied. */
export const COPY_TABLES: readonly CopyTable[] = [
  {
    name: "outputs",
    columns: [
      ["seq", B],
      ["job_id", T],
      ["agent", T],
      ["content_hash", T],
      ["body", T],
      ["source", T],
      ["recorded_at", B],
      ["traceparent", T],
    ],
    key: ["seq"],
    serial: "seq",
  },
  {
    name: "rejections",
    columns: [
      ["id", B],
      ["job_id", T],
      ["content_hash", T],
      ["body", T],
      ["source", T],
      ["at", B],
    ],
    key: ["id"],
    serial: "id",
  },
  {
    name: "runs",
    columns: [
      ["id", B],
      ["job_id", T],
      ["generation", I],
      ["state", T],
      ["due_at", B],
      ["lease_owner", T],
      ["lease_token", T],
      ["lease_until", B],
      ["attempts", I],
      ["lease_expiries", I],
      ["next_at", B],
      ["last_error", T],
      ["class", T],
      ["force_unprobeable", I],
      ["targets", T],
      ["effect_filter", T],
      ["replay", T],
      ["created_at", B],
      ["updated_at", B],
    ],
    key: ["id"],
    serial: "id",
  },
  {
    name: "active_targets",
    columns: [
      ["target", T],
      ["run_id", B],
    ],
    key: ["target", "run_id"],
  },
  {
    name: "effects",
    columns: [
      ["id", B],
      ["key", T],
      ["generation", I],
      ["job_id", T],
      ["idx", I],
      ["kind", T],
      ["spec_hash", T],
      ["state", T],
      ["detail", T],
      ["attempts", I],
      ["updated_at", B],
    ],
    key: ["id"],
    serial: "id",
  },
  {
    name: "jobs",
    columns: [
      ["seq", B],
      ["job_id", T],
      ["agent", T],
      ["input_hash", T],
      ["state", T],
      ["due_at", B],
      ["deliveries", I],
      ["lease_owner", T],
      ["lease_token", T],
      ["lease_until", B],
      ["next_at", B],
      ["stream_seq", B],
      ["last_error", T],
      ["last_class", T],
      ["retries", I],
      ["created_at", B],
      ["updated_at", B],
    ],
    key: ["seq"],
    serial: "seq",
  },
  {
    name: "job_inputs",
    columns: [
      ["seq", B],
      ["input", T],
      ["traceparent", T],
    ],
    key: ["seq"],
  },
  {
    name: "dead_letters",
    columns: [
      ["id", B],
      ["job_id", T],
      ["agent", T],
      ["class", T],
      ["deliveries", I],
      ["last_error", T],
      ["at", B],
      ["resolved_at", B],
      ["resolution", T],
    ],
    key: ["id"],
    serial: "id",
  },
  {
    name: "events",
    columns: [
      ["id", B],
      ["at", B],
      ["job_id", T],
      ["type", T],
      ["data", T],
      ["actor", T],
    ],
    key: ["id"],
    serial: "id",
  },
];

/** The column list of a table, quoted, in copy order. */
export const columnList = (t: CopyTable): string => t.columns.map(([c]) => `"${c}"`).join(", ");
