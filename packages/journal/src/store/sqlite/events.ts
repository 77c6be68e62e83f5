import type { EventRecord, JournalEvents } from "../../port/events.js";
import type { SqliteConnection } from "./connection.js";
import { type EventRow, toEvent } from "./rows.js";
import { where } from "./where.js";

/** Events in the order written, filtered by job, time and type. */
export function listEvents(
  c: SqliteConnection,
  filter: { jobId?: string; since?: number; type?: string; limit?: number } = {},
): EventRecord[] {
  const w = where([
    filter.jobId !== undefined && ["job_id = ?", filter.jobId],
    filter.since !== undefined && ["at >= ?", filter.since],
    filter.type !== undefined && ["type = ?", filter.type],
  ]);
  // The limit is a parameter, so the statement is one of eight shapes, each prepared once (an
  // output's page lists its events on every view).
  const limited = filter.limit !== undefined;
  if (limited) w.args.push(Math.max(0, Math.floor(filter.limit as number)));
  const rows = c
    .st(`SELECT * FROM events ${w.sql} ORDER BY id${limited ? " LIMIT ?" : ""}`)
    .all(...w.args) as EventRow[];
  return rows.map(toEvent);
}

/** The event log of a SQLite journal. */
export function sqliteEvents(c: SqliteConnection): JournalEvents {
  return {
    async append(event) {
      return c.batched(() => c.event(event));
    },

    async list(filter) {
      return listEvents(c, filter);
    },

    async count(types, since) {
      const out: Record<string, number> = Object.fromEntries(types.map((t) => [t, 0]));
      const s = c.st("SELECT COUNT(*) AS n FROM events WHERE type = ? AND at >= ?");
      for (const t of types) out[t] = (s.get(t, since ?? 0) as { n: number }).n;
      return out;
    },
  };
}
