import type { Table } from "drizzle-orm";
import type * as tables from "./tables.js";

/** A row of `table` as raw SQL returns it: keyed by column name, typed by the drizzle table. */
export type RowOf<T extends Table> = {
  [K in keyof T["_"]["columns"] as T["_"]["columns"][K]["_"]["name"]]: T["$inferSelect"][K &
    keyof T["$inferSelect"]];
};

/** A value as stored in a JSON text column: null for none. */
export const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

/** An `outputs` row. */
export type OutputRow = RowOf<typeof tables.outputs>;
/** A `runs` row. */
export type RunRow = RowOf<typeof tables.runs>;
/** An `events` row. */
export type EventRow = RowOf<typeof tables.events>;
/** A `rejections` row. */
export type RejectionRow = RowOf<typeof tables.rejections>;
