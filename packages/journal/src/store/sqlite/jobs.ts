import { enqueueOutcome, exhaustedDelivery, jobClaimDecision } from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import { jobInput } from "../../domain/job-input.js";
import { leaseEnd } from "../../domain/leases.js";
import { sqlStateList, UNFINISHED_JOB_STATES } from "../../domain/states.js";
import type {
  EnqueueResult,
  JobClaimResult,
  JobLease,
  JobRecord,
  JournalJobs,
} from "../../port/jobs.js";
import type { SqliteConnection } from "./connection.js";
import { deadLetterRow } from "./dead-letters.js";
import { heldJob } from "./held.js";
import { sqliteLeaseHolders } from "./lease-holders.js";
import {
  JOB_WITH_INPUT,
  type JobRow,
  type JobRowWithInput,
  jobRecord,
  toJob,
  toJobEntry,
} from "./rows.js";
import { insertedRowid } from "./statements.js";
import { placeholders } from "./where.js";

/** Jobs still waiting for an output, as a SQL list. */
const UNFINISHED = sqlStateList(UNFINISHED_JOB_STATES);

const insertJobInput = (
  c: SqliteConnection,
  seq: number,
  input: string,
  traceparent: string | undefined,
): void => {
  c.st("INSERT INTO job_inputs (seq, input, traceparent) VALUES (?, ?, ?)").run(
    seq,
    input,
    traceparent ?? null,
  );
};

/** The trace context kept with a job's input, or null. */
const traceparentOf = (c: SqliteConnection, seq: number): string | null =>
  (
    c.st("SELECT traceparent FROM job_inputs WHERE seq = ?").get(seq) as
      | { traceparent: string | null }
      | undefined
  )?.traceparent ?? null;

/** A job with its input, read inside or outside a transaction. */
export function jobOf(c: SqliteConnection, jobId: string): JobRecord | undefined {
  const r = c.st(`${JOB_WITH_INPUT} WHERE job_id = ?`).get(jobId) as JobRowWithInput | undefined;
  return r && toJob(r);
}

/** A delivery's lease on a job, and what the job record it answers holds. */
interface JobGrant {
  owner: string;
  leaseMs: number;
  now: number;
  /** The job's input, parsed. */
  input: unknown;
  traceparent: string | null | undefined;
  /** The delivery's stream sequence; the row's own when not given. */
  streamSeq?: number | null | undefined;
}

/** Leases `row` (read in this transaction) to `grant.owner`. */
function leaseJob(
  c: SqliteConnection,
  row: JobRow,
  grant: JobGrant,
): { lease: JobLease; job: JobRecord } {
  const { owner, leaseMs, now, input, traceparent } = grant;
  const streamSeq = grant.streamSeq === undefined ? row.stream_seq : grant.streamSeq;
  const token = c.ids();
  const until = leaseEnd(now, leaseMs);
  c.st(
    `UPDATE jobs SET state = 'running', lease_owner = ?, lease_token = ?, lease_until = ?, due_at = ?,
     deliveries = deliveries + 1, stream_seq = ?, updated_at = ? WHERE seq = ?`,
  ).run(owner, token, until, until, streamSeq, now, row.seq);
  const updated: JobRow = {
    ...row,
    stream_seq: streamSeq,
    state: "running",
    lease_owner: owner,
    lease_token: token,
    lease_until: until,
    deliveries: row.deliveries + 1,
    updated_at: now,
  };
  return {
    lease: { jobId: row.job_id, token, owner, until, deliveries: updated.deliveries },
    job: jobRecord(updated, input, traceparent),
  };
}

/** The job queue/outbox of a SQLite journal. */
export function sqliteJobs(c: SqliteConnection): JournalJobs {
  return {
    ...sqliteLeaseHolders(c, "jobs"),

    async enqueue(job, options = {}) {
      const { input, hash } = jobInput(job);
      return c.batched((): EnqueueResult => {
        const now = c.clock.now();
        const created = job.createdAt === undefined ? now : Date.parse(job.createdAt);
        const seq = insertedRowid(
          c
            .st(
              `INSERT INTO jobs (job_id, agent, input_hash, state, due_at, created_at, updated_at)
               VALUES (?, ?, ?, 'queued', ?, ?, ?) ON CONFLICT(job_id) DO NOTHING`,
            )
            .run(job.jobId, job.agent, hash, now, created, now),
        );
        const queueEvent = (type: string, at: number) => {
          if (options.queueEvent) {
            const data = { stream: "embedded", seq: at };
            c.event({ jobId: job.jobId, type, data, actor: options.actor ?? "enqueue" });
          }
        };
        if (seq !== undefined) {
          insertJobInput(c, seq, input, options.traceparent);
          queueEvent(E.JOB_ENQUEUED, seq);
          return { status: "enqueued", jobId: job.jobId, seq };
        }
        const existing = c
          .st("SELECT seq, input_hash FROM jobs WHERE job_id = ?")
          .get(job.jobId) as Pick<JobRow, "seq" | "input_hash">;
        if (enqueueOutcome(existing.input_hash, hash) === "conflict") {
          c.event({
            jobId: job.jobId,
            type: E.JOB_CONFLICT,
            actor: options.actor ?? "enqueue",
            data: {
              inputHash: hash,
              existingHash: existing.input_hash,
            },
          });
          return { status: "conflict", jobId: job.jobId };
        }
        queueEvent(E.JOB_DUPLICATE, existing.seq);
        return { status: "duplicate", jobId: job.jobId, seq: existing.seq };
      }, options.durable ?? true);
    },

    async get(jobId) {
      return jobOf(c, jobId);
    },

    async setStreamSeq(jobId, seq, event) {
      return c.batched(() => {
        c.st("UPDATE jobs SET stream_seq = ?, updated_at = ? WHERE job_id = ?").run(
          seq,
          c.clock.now(),
          jobId,
        );
        if (event) c.event({ ...event, jobId });
      }, false); // a note for the outbox republish, which dedups by msg id: no fsync of its own
    },

    async claimNext(options) {
      if (
        !c
          .st(`SELECT 1 FROM jobs WHERE state IN ${UNFINISHED} AND due_at <= ? LIMIT 1`)
          .get(c.clock.now())
      ) {
        return undefined;
      }
      const deadLettered: string[] = [];
      const claimed = await c.write(() => {
        const now = c.clock.now();
        const agents = options.agents;
        for (;;) {
          const row = (
            agents === undefined
              ? c
                  .st(
                    `${JOB_WITH_INPUT} WHERE state IN ${UNFINISHED} AND due_at <= ? ORDER BY due_at, jobs.seq LIMIT 1`,
                  )
                  .get(now)
              : c.db
                  .prepare(
                    `${JOB_WITH_INPUT} WHERE state IN ${UNFINISHED} AND due_at <= ?
                     AND agent IN (${placeholders(agents.length)}) ORDER BY due_at, jobs.seq LIMIT 1`,
                  )
                  .get(now, ...agents)
          ) as JobRowWithInput | undefined;
          if (!row) return undefined;
          if (c.st("SELECT 1 FROM outputs WHERE job_id = ?").get(row.job_id)) {
            c.st("UPDATE jobs SET state = 'done', due_at = NULL, updated_at = ? WHERE seq = ?").run(
              now,
              row.seq,
            );
            continue;
          }
          const exhausted = exhaustedDelivery(row, options.maxDeliver);
          if (exhausted) {
            deadLetterRow(c, row, { jobId: row.job_id, failure: exhausted, actor: options.owner });
            deadLettered.push(row.job_id);
            continue;
          }
          return leaseJob(c, row, {
            owner: options.owner,
            leaseMs: options.leaseMs,
            now,
            input: JSON.parse(row.input),
            traceparent: row.traceparent,
          });
        }
      }, false);
      if (deadLettered.length > 0) options.onDeadLettered?.(deadLettered);
      return claimed;
    },

    async claim(job, options) {
      const { input, hash } = jobInput(job);
      const claim = await c.batched((): JobClaimResult => {
        const now = c.clock.now();
        // One statement: whether the output is recorded, and the jobs row, not its input in
        // job_inputs (the caller's job holds it: same hash, or a conflict).
        const found = c
          .st(
            `SELECT EXISTS (SELECT 1 FROM outputs WHERE job_id = ?) AS recorded, jobs.*
             FROM (SELECT 1) LEFT JOIN jobs ON jobs.job_id = ?`,
          )
          .get(job.jobId, job.jobId) as Omit<JobRow, "seq"> & {
          seq: number | null;
          recorded: 0 | 1;
        };
        if (found.recorded === 1) return { status: "recorded" };
        let row = found.seq === null ? undefined : (found as JobRow);
        if (!row) {
          row = c
            .st(
              `INSERT INTO jobs (job_id, agent, input_hash, state, due_at, created_at, updated_at)
               VALUES (?, ?, ?, 'queued', ?, ?, ?) RETURNING *`,
            )
            .get(job.jobId, job.agent, hash, now, now, now) as JobRow;
          insertJobInput(c, row.seq, input, options.traceparent);
        }
        const decision = jobClaimDecision(row, hash, now);
        if (decision.status !== "acquire") return decision;
        const { lease, job: record } = leaseJob(c, row, {
          owner: options.owner,
          leaseMs: options.leaseMs,
          now,
          input: job.input,
          // The row's own trace context (read here only when a lease is taken).
          traceparent: traceparentOf(c, row.seq),
          streamSeq: options.streamSeq,
        });
        return { status: "acquired", lease, job: record };
      }, false);
      // A delivery is acked on "recorded": durable first, as in `outputs.has`.
      if (claim.status === "recorded") await c.durable();
      return claim;
    },

    async extendLease(lease, leaseMs) {
      return c.write(() => {
        heldJob(c, lease);
        const now = c.clock.now();
        const until = leaseEnd(now, leaseMs);
        c.st("UPDATE jobs SET lease_until = ?, due_at = ?, updated_at = ? WHERE job_id = ?").run(
          until,
          until,
          now,
          lease.jobId,
        );
        return { ...lease, until };
      }, false);
    },

    async fail(lease, failure) {
      await c.write(() => {
        heldJob(c, lease);
        const now = c.clock.now();
        c.st(
          `UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = ?,
           next_at = ?, last_error = ?, last_class = ?, updated_at = ? WHERE job_id = ?`,
        ).run(failure.nextAt, failure.nextAt, failure.error, failure.class, now, lease.jobId);
        c.event({
          jobId: lease.jobId,
          type: E.JOB_FAILED,
          actor: lease.owner,
          data: {
            class: failure.class,
            error: failure.error,
            nextAt: failure.nextAt,
          },
        });
      });
    },

    async release(lease, release) {
      await c.write(() => {
        heldJob(c, lease);
        const now = c.clock.now();
        c.st(
          `UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_token = NULL, lease_until = NULL,
           due_at = ?, next_at = NULL, deliveries = MAX(0, deliveries - 1), updated_at = ? WHERE job_id = ?`,
        ).run(now, now, lease.jobId);
        c.event({
          jobId: lease.jobId,
          type: E.JOB_RELEASED,
          actor: lease.owner,
          data: { reason: release.reason },
        });
      });
    },

    async pending(options = {}) {
      const rows = c
        .st(
          // jobs_due holds exactly the queued and running jobs: the scan reads none that are done.
          `SELECT jobs.*, job_inputs.input, job_inputs.traceparent FROM jobs INDEXED BY jobs_due JOIN job_inputs ON job_inputs.seq = jobs.seq
           WHERE state IN ${UNFINISHED} AND created_at >= ?
           AND NOT EXISTS (SELECT 1 FROM outputs o WHERE o.job_id = jobs.job_id) ORDER BY jobs.seq LIMIT ?`,
        )
        .all(options.since ?? 0, options.limit ?? -1) as JobRowWithInput[];
      return rows.map(toJob);
    },

    async list(options = {}) {
      const where: string[] = [];
      const params: (string | number)[] = [];
      if (options.agent !== undefined) {
        where.push("AND agent = ?");
        params.push(options.agent);
      }
      if (options.state !== undefined) {
        where.push("AND state = ?");
        params.push(options.state);
      }
      const rows = c.db
        .prepare(
          // jobs_due holds exactly the queued and running jobs, as in pending.
          `SELECT jobs.* FROM jobs INDEXED BY jobs_due WHERE state IN ${UNFINISHED} ${where.join(" ")}
           AND NOT EXISTS (SELECT 1 FROM outputs o WHERE o.job_id = jobs.job_id) ORDER BY jobs.seq LIMIT ?`,
        )
        .all(...params, options.limit ?? -1) as JobRow[];
      return rows.map(toJobEntry);
    },

    async count(options = {}) {
      const row = (
        options.since === undefined
          ? c.st("SELECT COUNT(*) AS n FROM jobs").get()
          : c.st("SELECT COUNT(*) AS n FROM jobs WHERE created_at >= ?").get(options.since)
      ) as { n: number };
      return row.n;
    },
  };
}
