import { canonicalJson, sha256Hex } from "@idem/schema";
import { DROPPED_BODY, recordOutcome, rejectionDecision } from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import { isDamaged, outputSummary, readOutput } from "../../domain/output-damage.js";
import type { RunState } from "../../domain/states.js";
import type { RecordRequest } from "../../domain/writes.js";
import type { DamagedOutput, JournalOutputs, RecordResult } from "../../port/outputs.js";
import type { SqliteConnection } from "./connection.js";
import { type OutputRow, type RejectionRow, toOutput, toRejection } from "./rows.js";
import { insertRun } from "./runs.js";
import { OUTPUT_COLUMNS, type OutputTuple, outputRowOf, selectOutputs } from "./select.js";
import { insertedRowid, pagesOf } from "./statements.js";
import { limitClause, where } from "./where.js";

/** Records one output inside the caller's (batched) transaction. */
function recordInTx(c: SqliteConnection, request: RecordRequest): RecordResult {
  const { output, options, body, hash } = request;
  const actor = options.actor ?? options.source;
  const now = c.clock.now();
  const inserted = insertedRowid(
    c
      .st(
        `INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at, traceparent)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(job_id) DO NOTHING`,
      )
      .run(
        output.jobId,
        output.agent,
        hash,
        body,
        options.source,
        now,
        options.traceparent ?? null,
      ),
  );
  if (inserted === undefined) {
    const existing = c
      .st("SELECT seq, content_hash FROM outputs WHERE job_id = ?")
      .get(output.jobId) as Pick<OutputRow, "seq" | "content_hash">;
    if (recordOutcome(existing.content_hash, hash) === "duplicate") {
      c.event({
        jobId: output.jobId,
        type: E.OUTPUT_DUPLICATE,
        actor,
        data: { source: options.source },
      });
      return { status: "duplicate", jobId: output.jobId, seq: existing.seq, contentHash: hash };
    }
    // Kept once per distinct content (an identical conflict resubmitted is an event only), with
    // its body up to REJECTED_BODIES_PER_JOB per job.
    const held = c
      .st(
        `SELECT COALESCE(SUM(body != ''), 0) AS kept, COALESCE(MAX(content_hash = ?), 0) AS known
         FROM rejections WHERE job_id = ?`,
      )
      .get(hash, output.jobId) as { kept: number; known: number };
    const decision = rejectionDecision(held.kept, held.known === 1);
    if (decision !== "known")
      c.st(
        "INSERT INTO rejections (job_id, content_hash, body, source, at) VALUES (?, ?, ?, ?, ?)",
      ).run(output.jobId, hash, decision === "keep" ? body : DROPPED_BODY, options.source, now);
    c.event({
      jobId: output.jobId,
      type: E.OUTPUT_CONFLICT,
      actor,
      data: {
        source: options.source,
        contentHash: hash,
        existingHash: existing.content_hash,
        ...(decision === "drop-body" && { bodyDropped: true }),
      },
    });
    return {
      status: "conflict",
      jobId: output.jobId,
      contentHash: hash,
      existingHash: existing.content_hash,
    };
  }
  insertRun(c, {
    jobId: output.jobId,
    generation: 1,
    targets: options.targets,
    forceUnprobeable: false,
    now,
  });
  c.st(
    `UPDATE jobs SET state = 'done', due_at = NULL, lease_owner = NULL, lease_token = NULL, lease_until = NULL,
     updated_at = ? WHERE job_id = ? AND state != 'done'`,
  ).run(now, output.jobId);
  c.event({
    jobId: output.jobId,
    type: E.OUTPUT_RECORDED,
    actor,
    data: {
      source: options.source,
      seq: inserted,
      contentHash: hash,
    },
  });
  return { status: "recorded", jobId: output.jobId, seq: inserted, contentHash: hash };
}

/** The rejections of one job or all, oldest first. */
export function rejectionsOf(c: SqliteConnection, jobId?: string) {
  const rows = (
    jobId === undefined
      ? c.st("SELECT * FROM rejections ORDER BY id").all()
      : c.st("SELECT * FROM rejections WHERE job_id = ? ORDER BY id").all(jobId)
  ) as RejectionRow[];
  return rows.map(toRejection);
}

/** The outputs of a SQLite journal. */
export function sqliteOutputs(c: SqliteConnection): JournalOutputs {
  return {
    async record(output, options) {
      const body = options.canonical ?? canonicalJson(output);
      const hash = sha256Hex(body);
      return c.batched(() => recordInTx(c, { output, options, body, hash }));
    },

    async get(jobId) {
      const r = c.st("SELECT * FROM outputs WHERE job_id = ?").get(jobId) as OutputRow | undefined;
      return r && toOutput(r);
    },

    /**
     * A yes is durable before it is answered, since callers ack deliveries on it: the output may be
     * another process's commit whose fsync is still under way.
     */
    async has(jobId) {
      if (c.st("SELECT 1 FROM outputs WHERE job_id = ?").get(jobId) === undefined) return false;
      await c.durable();
      return true;
    },

    async list(filter = {}) {
      const w = where([
        filter.agent !== undefined && ["o.agent = ?", filter.agent],
        filter.since !== undefined && ["o.recorded_at >= ?", filter.since],
        filter.state !== undefined && ["r.state = ?", filter.state],
      ]);
      const rows = c.db
        .prepare(
          `SELECT o.*, r.generation AS run_generation, r.state AS run_state
           FROM outputs o JOIN runs r ON r.job_id = o.job_id
             AND r.generation = (SELECT MAX(generation) FROM runs WHERE job_id = o.job_id)
           ${w.sql}
           ORDER BY o.seq ${limitClause(filter.limit)}`,
        )
        .all(...w.args) as (OutputRow & { run_generation: number; run_state: RunState })[];
      return rows.map((r) =>
        outputSummary(r, { generation: r.run_generation, state: r.run_state }),
      );
    },

    async select(selection) {
      return selectOutputs(c.db, selection);
    },

    async page(selection, page) {
      return selectOutputs(c.db, selection, page);
    },

    async rejections(jobId) {
      return rejectionsOf(c, jobId);
    },

    async damaged() {
      const found: DamagedOutput[] = [];
      const page = c.db
        .prepare(`SELECT ${OUTPUT_COLUMNS} FROM outputs o WHERE o.seq > ? ORDER BY o.seq LIMIT ?`)
        .raw(true);
      for await (const rows of pagesOf<OutputTuple>(page)) {
        for (const row of rows) {
          const o = readOutput(outputRowOf(row));
          if (isDamaged(o)) found.push(o);
        }
      }
      return found;
    },
  };
}
