import { toEvent } from "../../domain/records.js";
import type { EventRecord, JournalEvents } from "../../port/events.js";
import type { PostgresConnection } from "./connection.js";
import type { EventRow } from "./rows.js";
import { where } from "./where.js";

/** Events in the order written, filtered by job, time and type. */
export async function listEvents(
  c: PostgresConnection,
  filter: { jobId?: string; since?: number; type?: string; limit?: number } = {},
): Promise<EventRecord[]> {
  const w = where([
    filter.jobId !== undefined && ["job_id = ?", filter.jobId],
    filter.since !== undefined && ["at >= ?", filter.since],
    filter.type !== undefined && ["type = ?", filter.type],
  ]);
  const limit = filter.limit === undefined ? "" : `LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
  const rows = await c.query<EventRow>(
    `SELECT * FROM events ${w.sql} ORDER BY id ${limit}`,
    w.args,
  );
  return rows.map(toEvent);
}

/** The event log of a PostgreSQL journal. */
export function postgresEvents(c: PostgresConnection): JournalEvents {
  return {
    async append(event) {
      await c.tx((client) => c.event(client, event));
    },

    async list(filter) {
      return listEvents(c, filter);
    },

    async count(types, since) {
      const out: Record<string, number> = Object.fromEntries(types.map((t) => [t, 0]));
      const rows = await c.query<{ type: string; n: number }>(
        "SELECT type, count(*)::int AS n FROM events WHERE type = ANY($1) AND at >= $2 GROUP BY type",
        [[...types], since ?? 0],
      );
      for (const r of rows) out[r.type] = r.n;
      return out;
    },
  };
}
