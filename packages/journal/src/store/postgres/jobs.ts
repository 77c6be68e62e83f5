import type { Job } from "@idem/schema";
import type pg from "pg";
import { enqueueOutcome, exhaustedDelivery, jobClaimDecision } from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import { jobInput } from "../../domain/job-input.js";
import { jobLeaseLost } from "../../domain/leases.js";
import { jobRecord, toJob, toJobEntry } from "../../domain/records.js";
import { sqlStateList, UNFINISHED_JOB_STATES } from "../../domain/states.js";
import type {
  EnqueueResult,
  JobClaimResult,
  JobLease,
  JobRecord,
  JournalJobs,
} from "../../port/jobs.js";
import { claimJobInOneTrip } from "./claim-job.js";
import {
  durableAtCommit,
  NOW_MS,
  type PostgresConnection,
  SOON,
  sqlState,
  UNIQUE_VIOLATION,
} from "./connection.js";
import { deadLetterRow, type JobRow } from "./dead-letters.js";
import { jobStateOf } from "./held.js";
import { postgresLeaseHolders } from "./lease-holders.js";
import { announceWork } from "./notify.js";
import { insertJob } from "./one-trip.js";
import type { RowOf } from "./rows.js";
import type * as tables from "./tables.js";

/** A `jobs` row with its input and trace context (`JOB_WITH_INPUT`). */
type JobRowWithInput = JobRow & Pick<RowOf<typeof tables.jobInputs>, "input" | "traceparent">;

/** Jobs still waiting for an output, as a SQL list. */
const UNFINISHED = sqlStateList(UNFINISHED_JOB_STATES);
/** Jobs rows with their inputs: where clauses name the jobs columns unqualified. */
const JOB_WITH_INPUT =
  "SELECT jobs.*, job_inputs.input, job_inputs.traceparent FROM jobs JOIN job_inputs ON job_inputs.seq = jobs.seq";
/** The unique constraint on `jobs.job_id`: the one 23505 an enqueue answers as duplicate/conflict. */
const JOB_KEY = "jobs_job_id_unique";

/**
 * Leases `row` (locked by the caller) to `owner` until the database's now + `leaseMs`: a fresh
 * token, one more delivery. `input` is the job's, parsed.
 */
async function leaseJob(
  c: PostgresConnection,
  client: pg.PoolClient,
  row: JobRow,
  grant: {
    owner: string;
    leaseMs: number;
    streamSeq?: number;
    /** The job's input, parsed. */
    input: unknown;
    traceparent: string | null;
  },
): Promise<{ lease: JobLease; job: JobRecord }> {
  const { input, traceparent, ...options } = grant;
  const token = c.ids();
  const { rows } = await client.query<JobRow>(
    `UPDATE jobs SET state = 'running', lease_owner = $1, lease_token = $2,
     lease_until = ${NOW_MS} + $3, due_at = ${NOW_MS} + $3, deliveries = deliveries + 1,
     stream_seq = $4, updated_at = $5 WHERE seq = $6 RETURNING *`,
    [
      options.owner,
      token,
      options.leaseMs,
      options.streamSeq ?? row.stream_seq,
      c.clock.now(),
      row.seq,
    ],
  );
  const updated = rows[0] as JobRow;
  return {
    lease: {
      jobId: row.job_id,
      token,
      owner: options.owner,
      until: updated.lease_until as number,
      deliveries: updated.deliveries,
    },
    job: jobRecord(updated, input, traceparent),
  };
}

/** Whether the job's output is recorded. */
async function recorded(client: pg.PoolClient, jobId: string): Promise<boolean> {
  const r = await client.query("SELECT 1 FROM outputs WHERE job_id = $1", [jobId]);
  return (r.rowCount ?? 0) > 0;
}

/** The job queue/outbox of a PostgreSQL journal: a queue several hosts' executors claim from. */
export function postgresJobs(c: PostgresConnection): JournalJobs {
  /** The answer to an enqueue whose insert lost to the job key: the first job decides. */
  const existingJob = (job: Job, hash: string, actor: string, queueEvent: boolean) =>
    c.tx(async (client): Promise<EnqueueResult> => {
      const { rows } = await client.query<Pick<JobRow, "seq" | "input_hash">>(
        "SELECT seq, input_hash FROM jobs WHERE job_id = $1",
        [job.jobId],
      );
      const existing = rows[0] as Pick<JobRow, "seq" | "input_hash">;
      if (enqueueOutcome(existing.input_hash, hash) === "conflict") {
        await c.event(client, {
          jobId: job.jobId,
          type: E.JOB_CONFLICT,
          actor,
          data: {
            inputHash: hash,
            existingHash: existing.input_hash,
          },
        });
        return { status: "conflict", jobId: job.jobId };
      }
      if (queueEvent) {
        const data = { stream: "embedded", seq: existing.seq };
        await c.event(client, { jobId: job.jobId, type: E.JOB_DUPLICATE, actor, data });
      }
      return { status: "duplicate", jobId: job.jobId, seq: existing.seq };
    });

  return {
    ...postgresLeaseHolders(c, "jobs"),

    /** Every commit is durable (synchronous_commit): `durable: false` changes nothing here. */
    async enqueue(job, options = {}) {
      const { input, hash } = jobInput(job);
      try {
        const now = c.clock.now();
        const created = job.createdAt === undefined ? now : Date.parse(job.createdAt);
        const row = await insertJob(c, {
          job,
          hash,
          input,
          created,
          now,
          traceparent: options.traceparent,
          queueEvent: options.queueEvent
            ? { type: E.JOB_ENQUEUED, actor: options.actor ?? "enqueue" }
            : undefined,
        });
        const enqueued: EnqueueResult = { status: "enqueued", jobId: job.jobId, seq: row.seq };
        await announceWork(c, "jobs");
        return enqueued;
      } catch (e) {
        // Only the job key taken (first write wins): anything else propagates as it is.
        if (
          sqlState(e) !== UNIQUE_VIOLATION ||
          (e as { constraint?: string }).constraint !== JOB_KEY
        )
          throw e;
        return existingJob(job, hash, options.actor ?? "enqueue", options.queueEvent === true);
      }
    },

    async get(jobId) {
      const [r] = await c.query<JobRowWithInput>(`${JOB_WITH_INPUT} WHERE job_id = $1`, [jobId]);
      return r && toJob(r);
    },

    async setStreamSeq(jobId, seq, event) {
      // A note, durable soon: the outbox republish it serves dedups by message ID.
      await c.tx(async (client) => {
        await client.query("UPDATE jobs SET stream_seq = $1, updated_at = $2 WHERE job_id = $3", [
          seq,
          c.clock.now(),
          jobId,
        ]);
        if (event) await c.event(client, { ...event, jobId });
      }, SOON);
    },

    /**
     * The next due job, taken with `FOR UPDATE SKIP LOCKED`: executors on several hosts claim at
     * once, each skipping the rows another holds, and a row another claim changed meanwhile is
     * read again before it is taken (one holder per job at a time).
     */
    async claimNext(options) {
      const agents = options.agents === undefined ? null : [...options.agents];
      const due = `state IN ${UNFINISHED} AND due_at <= ${NOW_MS} AND ($1::text[] IS NULL OR agent = ANY($1))`;
      // The usual claim, one round trip and no transaction block: it is also the look of an idle
      // poller (nothing due, nothing written). A due job it leaves is for the transaction below.
      const trip = await claimJobInOneTrip(c, options);
      if (trip.found !== "unleased") {
        return trip.found === "leased" ? { lease: trip.lease, job: trip.job } : undefined;
      }
      const deadLettered: string[] = [];
      // Durable soon (docs/reliability.md, "What is durable when"): a crash of the server that
      // loses the claim loses a lease, and the job is due again as before: delivered again, its
      // agent maybe run again, as after a lapsed lease; the output record (durable, first write
      // wins) comes after it in the WAL. A dead letter written on the way is durable at once.
      const claimed = await c.tx(async (client) => {
        deadLettered.length = 0; // a retried transaction starts over
        for (;;) {
          // Whether its output is recorded is read with it: one round trip.
          const { rows } = await client.query<JobRowWithInput & { recorded: boolean }>(
            `SELECT jobs.*, job_inputs.input, job_inputs.traceparent,
               EXISTS (SELECT 1 FROM outputs WHERE outputs.job_id = jobs.job_id) AS recorded
             FROM jobs JOIN job_inputs ON job_inputs.seq = jobs.seq
             WHERE ${due} ORDER BY due_at, jobs.seq LIMIT 1 FOR UPDATE OF jobs SKIP LOCKED`,
            [agents],
          );
          const row = rows[0];
          if (!row) return undefined;
          if (row.recorded) {
            await client.query(
              "UPDATE jobs SET state = 'done', due_at = NULL, updated_at = $1 WHERE seq = $2",
              [c.clock.now(), row.seq],
            );
            continue;
          }
          const exhausted = exhaustedDelivery(row, options.maxDeliver);
          if (exhausted) {
            await durableAtCommit(client);
            await deadLetterRow(c, client, row, {
              jobId: row.job_id,
              failure: exhausted,
              actor: options.owner,
            });
            deadLettered.push(row.job_id);
            continue;
          }
          return leaseJob(c, client, row, {
            ...options,
            input: JSON.parse(row.input),
            traceparent: row.traceparent,
          });
        }
      }, SOON);
      if (deadLettered.length > 0) options.onDeadLettered?.(deadLettered);
      return claimed;
    },

    async claim(job, options) {
      const { input, hash } = jobInput(job);
      // Durable soon, as claimNext: a lost claim (or job row made for a published job) is a lost
      // lease, and the unacked delivery comes again. `recorded` reads an output that is durable
      // already (records commit synchronously and are seen only then).
      return c.tx(async (client): Promise<JobClaimResult> => {
        if (await recorded(client, job.jobId)) return { status: "recorded" };
        const now = c.clock.now();
        const read = () =>
          client.query<JobRow & { db_now: number }>(
            `SELECT jobs.*, ${NOW_MS} AS db_now FROM jobs WHERE job_id = $1 FOR UPDATE`,
            [job.jobId],
          );
        let row = (await read()).rows[0];
        if (!row) {
          // A job published by another client: its row, unless a concurrent claim wrote it first.
          const inserted = await client.query<JobRow>(
            `INSERT INTO jobs (job_id, agent, input_hash, state, due_at, created_at, updated_at)
             VALUES ($1, $2, $3, 'queued', ${NOW_MS}, $4, $4) ON CONFLICT (job_id) DO NOTHING RETURNING seq`,
            [job.jobId, job.agent, hash, now],
          );
          const seq = inserted.rows[0]?.seq;
          if (seq !== undefined) {
            await client.query(
              "INSERT INTO job_inputs (seq, input, traceparent) VALUES ($1, $2, $3)",
              [seq, input, options.traceparent ?? null],
            );
          }
          row = (await read()).rows[0] as JobRow & { db_now: number };
        }
        const decision = jobClaimDecision(row, hash, row.db_now);
        if (decision.status !== "acquire") return decision;
        const tp = await client.query<{ traceparent: string | null }>(
          "SELECT traceparent FROM job_inputs WHERE seq = $1",
          [row.seq],
        );
        const { lease, job: record } = await leaseJob(c, client, row, {
          ...options,
          input: job.input,
          traceparent: tp.rows[0]?.traceparent ?? null,
        });
        return { status: "acquired", lease, job: record };
      }, SOON);
    },

    async extendLease(lease, leaseMs) {
      // Durable soon: a lost extension leaves the shorter lease, as a late heartbeat does.
      return c.tx(async (client) => {
        const { rows } = await client.query<{ lease_until: number }>(
          `UPDATE jobs SET lease_until = ${NOW_MS} + $1, due_at = ${NOW_MS} + $1, updated_at = $2
           WHERE job_id = $3 AND state = 'running' AND lease_token = $4 RETURNING lease_until`,
          [leaseMs, c.clock.now(), lease.jobId, lease.token],
        );
        const until = rows[0]?.lease_until;
        if (until === undefined) throw jobLeaseLost(lease, await jobStateOf(client, lease.jobId));
        return { ...lease, until };
      }, SOON);
    },

    /**
     * Back to queued. The caller's `nextAt` is read as a delay from its own clock, and the job is
     * due that long after the database's now: hosts whose clocks disagree back off alike.
     */
    async fail(lease, failure) {
      await c.tx(async (client) => {
        const now = c.clock.now();
        const delay = Math.max(0, Math.round(failure.nextAt - now));
        const { rows } = await client.query<{ next_at: number }>(
          `UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_token = NULL, lease_until = NULL,
           due_at = ${NOW_MS} + $1, next_at = ${NOW_MS} + $1, last_error = $2, last_class = $3, updated_at = $4
           WHERE job_id = $5 AND state = 'running' AND lease_token = $6 RETURNING next_at`,
          [delay, failure.error, failure.class, now, lease.jobId, lease.token],
        );
        const nextAt = rows[0]?.next_at;
        if (nextAt === undefined) throw jobLeaseLost(lease, await jobStateOf(client, lease.jobId));
        await c.event(client, {
          jobId: lease.jobId,
          type: E.JOB_FAILED,
          actor: lease.owner,
          data: {
            class: failure.class,
            error: failure.error,
            nextAt,
          },
        });
      });
    },

    async release(lease, release) {
      await c.tx(async (client) => {
        const { rows } = await client.query<{ seq: number }>(
          `UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_token = NULL, lease_until = NULL,
           due_at = ${NOW_MS}, next_at = NULL, deliveries = GREATEST(0, deliveries - 1), updated_at = $1
           WHERE job_id = $2 AND state = 'running' AND lease_token = $3 RETURNING seq`,
          [c.clock.now(), lease.jobId, lease.token],
        );
        if (rows.length === 0) throw jobLeaseLost(lease, await jobStateOf(client, lease.jobId));
        await c.event(client, {
          jobId: lease.jobId,
          type: E.JOB_RELEASED,
          actor: lease.owner,
          data: { reason: release.reason },
        });
      });
      await announceWork(c, "jobs");
    },

    async pending(options = {}) {
      const limit =
        options.limit === undefined ? "ALL" : String(Math.max(0, Math.floor(options.limit)));
      const rows = await c.query<JobRowWithInput>(
        `${JOB_WITH_INPUT} WHERE state IN ${UNFINISHED} AND created_at >= $1
         AND NOT EXISTS (SELECT 1 FROM outputs o WHERE o.job_id = jobs.job_id) ORDER BY jobs.seq LIMIT ${limit}`,
        [options.since ?? 0],
      );
      return rows.map(toJob);
    },

    async list(options = {}) {
      const limit =
        options.limit === undefined ? "ALL" : String(Math.max(0, Math.floor(options.limit)));
      const where: string[] = [];
      const params: string[] = [];
      if (options.agent !== undefined) {
        params.push(options.agent);
        where.push(`AND agent = $${params.length}`);
      }
      if (options.state !== undefined) {
        params.push(options.state);
        where.push(`AND state = $${params.length}`);
      }
      const rows = await c.query<JobRow>(
        `SELECT jobs.* FROM jobs WHERE state IN ${UNFINISHED} ${where.join(" ")}
         AND NOT EXISTS (SELECT 1 FROM outputs o WHERE o.job_id = jobs.job_id) ORDER BY jobs.seq LIMIT ${limit}`,
        params,
      );
      return rows.map(toJobEntry);
    },

    async count(options = {}) {
      const [row] = await c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM jobs WHERE created_at >= $1",
        [options.since ?? Number.MIN_SAFE_INTEGER],
      );
      return row?.n ?? 0;
    },
  };
}
