import { canonicalJson, sha256Hex } from "@idem/schema";
import { toOutput, toRejection } from "../../domain/records.js";
import type { RunState } from "../../domain/states.js";
import type { JournalOutputs, OutputSummary } from "../../port/outputs.js";
import type { PostgresConnection } from "./connection.js";
import { RecordQueue } from "./record-queue.js";
import type { OutputRow, RejectionRow } from "./rows.js";
import { selectOutputs } from "./select.js";
import { where } from "./where.js";

export { insertRun, lockKey } from "./record.js";

/**
 * The outputs of a PostgreSQL journal. Concurrent records share statements and commits (group
 * commit, `RecordQueue`); a lone record is one statement as before.
 */
export function postgresOutputs(c: PostgresConnection): JournalOutputs {
  const queue = new RecordQueue(c);
  return {
    async record(output, options) {
      const body = options.canonical ?? canonicalJson(output);
      return queue.record({ output, options, body, hash: sha256Hex(body) });
    },

    async get(jobId) {
      const [r] = await c.query<OutputRow>("SELECT * FROM outputs WHERE job_id = $1", [jobId]);
      return r && toOutput(r);
    },

    /** A yes is durable: every output row visible here was committed (synchronous_commit on). */
    async has(jobId) {
      const rows = await c.query("SELECT 1 FROM outputs WHERE job_id = $1", [jobId]);
      return rows.length > 0;
    },

    async list(filter = {}) {
      const w = where([
        filter.agent !== undefined && ["o.agent = ?", filter.agent],
        filter.since !== undefined && ["o.recorded_at >= ?", filter.since],
        filter.state !== undefined && ["r.state = ?", filter.state],
      ]);
      const limit =
        filter.limit === undefined ? "" : `LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
      const rows = await c.query<
        Pick<OutputRow, "seq" | "job_id" | "agent" | "recorded_at"> & {
          effects: number;
          generation: number;
          state: RunState;
        }
      >(
        `SELECT o.seq, o.job_id, o.agent, o.recorded_at, r.generation, r.state,
           json_array_length(o.body::json -> 'effects') AS effects
         FROM outputs o JOIN LATERAL (
           SELECT generation, state FROM runs WHERE job_id = o.job_id ORDER BY generation DESC LIMIT 1
         ) r ON true
         ${w.sql} ORDER BY o.seq ${limit}`,
        w.args,
      );
      return rows.map(
        (r): OutputSummary => ({
          seq: r.seq,
          jobId: r.job_id,
          agent: r.agent,
          effects: r.effects,
          recordedAt: r.recorded_at,
          generation: r.generation,
          state: r.state,
        }),
      );
    },
    async select(selection) {
      return selectOutputs(c, selection);
    },
    async page(selection, page) {
      return selectOutputs(c, selection, page);
    },
    async rejections(jobId) {
      const rows =
        jobId === undefined
          ? await c.query<RejectionRow>("SELECT * FROM rejections ORDER BY id")
          : await c.query<RejectionRow>("SELECT * FROM rejections WHERE job_id = $1 ORDER BY id", [
              jobId,
            ]);
      return rows.map(toRejection);
    },
  };
}
