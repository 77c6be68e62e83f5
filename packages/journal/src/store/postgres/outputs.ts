import { canonicalJson, sha256Hex } from "@idem/schema";
import { isDamaged, outputSummary, readOutput, toOutput } from "../../domain/output-damage.js";
import { toRejection } from "../../domain/records.js";
import type { RunState } from "../../domain/states.js";
import type { DamagedOutput, JournalOutputs } from "../../port/outputs.js";
import type { PostgresConnection } from "./connection.js";
import { RecordQueue } from "./record-queue.js";
import type { OutputRow, RejectionRow } from "./rows.js";
import { selectOutputs } from "./select.js";
import { where } from "./where.js";

export { insertRun, lockKey } from "./record.js";

/** Rows per read of `damaged`'s pass over the table. */
const DAMAGE_SCAN_PAGE = 1000;

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
      const rows = await c.query<OutputRow & { run_generation: number; run_state: RunState }>(
        `SELECT o.*, r.generation AS run_generation, r.state AS run_state
         FROM outputs o JOIN LATERAL (
           SELECT generation, state FROM runs WHERE job_id = o.job_id ORDER BY generation DESC LIMIT 1
         ) r ON true
         ${w.sql} ORDER BY o.seq ${limit}`,
        w.args,
      );
      return rows.map((r) =>
        outputSummary(r, { generation: r.run_generation, state: r.run_state }),
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
    async damaged() {
      const found: DamagedOutput[] = [];
      for (let after = 0; ; ) {
        const rows = await c.query<OutputRow>(
          `SELECT * FROM outputs WHERE seq > $1 ORDER BY seq LIMIT ${DAMAGE_SCAN_PAGE}`,
          [after],
        );
        for (const r of rows) {
          const o = readOutput(r);
          if (isDamaged(o)) found.push(o);
        }
        const last = rows.at(-1);
        if (!last || rows.length < DAMAGE_SCAN_PAGE) return found;
        after = last.seq;
      }
    },
  };
}
