import { type AgentOutput, canonicalJson, sha256Hex } from "@idem/schema";
import type pg from "pg";
import { recordOutcome } from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import { toOutput, toRejection } from "../../domain/records.js";
import type { JournalOutputs, RecordOptions, RecordResult } from "../../port/outputs.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import type { OutputRow, RejectionRow } from "./rows.js";

/** Inserts run generation `generation` (pending, due at the server's now) and its active targets. */
export async function insertRun(
  client: pg.PoolClient,
  jobId: string,
  generation: number,
  targets: readonly string[],
  force: boolean,
  now: number,
): Promise<number> {
  const { rows } = await client.query<{ id: number }>(
    `INSERT INTO runs (job_id, generation, state, due_at, force_unprobeable, targets, created_at, updated_at)
     VALUES ($1, $2, 'pending', ${NOW_MS}, $3, $4, $5, $5) RETURNING id`,
    [jobId, generation, force ? 1 : 0, JSON.stringify(targets), now],
  );
  const id = (rows[0] as { id: number }).id;
  if (targets.length > 0) {
    await client.query(
      `INSERT INTO active_targets (target, run_id) SELECT t, $2 FROM unnest($1::text[]) AS t
       ON CONFLICT DO NOTHING`,
      [[...targets], id],
    );
  }
  return id;
}

/**
 * Records one output in one transaction, first write wins by the unique index on job_id: the
 * insert that loses (`ON CONFLICT DO NOTHING` inserts nothing) reads the winner's hash, and the
 * shared domain decides duplicate or conflict. Answered after COMMIT returned.
 */
async function recordInTx(
  c: PostgresConnection,
  client: pg.PoolClient,
  output: AgentOutput,
  options: RecordOptions,
  body: string,
  hash: string,
): Promise<RecordResult> {
  const actor = options.actor ?? options.source;
  const now = c.clock.now();
  const inserted = await client.query<{ seq: number }>(
    `INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at, traceparent)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (job_id) DO NOTHING RETURNING seq`,
    [output.jobId, output.agent, hash, body, options.source, now, options.traceparent ?? null],
  );
  const seq = inserted.rows[0]?.seq;
  if (seq === undefined) {
    const { rows } = await client.query<Pick<OutputRow, "seq" | "content_hash">>(
      "SELECT seq, content_hash FROM outputs WHERE job_id = $1",
      [output.jobId],
    );
    const existing = rows[0] as Pick<OutputRow, "seq" | "content_hash">;
    if (recordOutcome(existing.content_hash, hash) === "duplicate") {
      await c.event(client, output.jobId, E.OUTPUT_DUPLICATE, actor, { source: options.source });
      return { status: "duplicate", jobId: output.jobId, seq: existing.seq, contentHash: hash };
    }
    await client.query(
      "INSERT INTO rejections (job_id, content_hash, body, source, at) VALUES ($1, $2, $3, $4, $5)",
      [output.jobId, hash, body, options.source, now],
    );
    await c.event(client, output.jobId, E.OUTPUT_CONFLICT, actor, {
      source: options.source,
      contentHash: hash,
      existingHash: existing.content_hash,
    });
    return {
      status: "conflict",
      jobId: output.jobId,
      contentHash: hash,
      existingHash: existing.content_hash,
    };
  }
  await insertRun(client, output.jobId, 1, options.targets, false, now);
  await client.query(
    `UPDATE jobs SET state = 'done', due_at = NULL, lease_owner = NULL, lease_token = NULL,
     lease_until = NULL, updated_at = $1 WHERE job_id = $2 AND state != 'done'`,
    [now, output.jobId],
  );
  await c.event(client, output.jobId, E.OUTPUT_RECORDED, actor, {
    source: options.source,
    seq,
    contentHash: hash,
  });
  return { status: "recorded", jobId: output.jobId, seq, contentHash: hash };
}

/** The outputs of a PostgreSQL journal (record, get, has, rejections so far; see the README). */
export function postgresOutputs(
  c: PostgresConnection,
): Pick<JournalOutputs, "record" | "get" | "has" | "rejections"> {
  return {
    async record(output, options) {
      const body = options.canonical ?? canonicalJson(output);
      const hash = sha256Hex(body);
      return c.tx((client) => recordInTx(c, client, output, options, body, hash));
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
