import type { JobEntry, JournalStore } from "@idem/journal";
import type { Config, FailureClass } from "@idem/schema";

/**
 * Where a job without an output stands, as `idem jobs` says it: `queued` (due now: the next idle
 * delivery takes it), `waiting` (a delivery failed; tried again at `nextAt`), `leased` (a delivery
 * holds it until `leaseUntil`) or `expired` (the lease ended with no output: its executor died or
 * stalled; the next claim takes it over).
 */
export type WaitingJobState = "queued" | "waiting" | "leased" | "expired";

/** The waiting states, in the order a listing counts them. */
export const WAITING_JOB_STATES: readonly WaitingJobState[] = [
  "queued",
  "waiting",
  "leased",
  "expired",
];

/** One job without an output, as `idem jobs --json` lists it. */
export interface WaitingJob {
  jobId: string;
  agent: string;
  state: WaitingJobState;
  /** Deliveries so far; a leased job's current one included. */
  deliveries: number;
  /** `queue.maxDeliver`: the delivery that fails at it dead-letters the job. */
  maxDeliver: number;
  /** The executor holding (or that last held) its lease: `<host>:<pid>:<random>@…` (`createOwnerId`); null if none. */
  holder: string | null;
  /** When its lease ends (leased) or ended (expired), epoch ms; null when not leased. */
  leaseUntil: number | null;
  /** When a waiting job is tried again (epoch ms); null otherwise. */
  nextAt: number | null;
  lastError: string | null;
  lastClass: FailureClass | null;
  createdAt: number;
  /** Its message in the jobs stream (JetStream), null when not published (or embedded). */
  streamSeq: number | null;
  /** What happens to it next, in words. */
  next: string;
}

/** A consumer's backlog as the server counts it. */
export interface ConsumerBacklog {
  agent: string;
  consumer: string;
  /** Messages not delivered yet. */
  pending: number;
  /** Delivered, neither acked nor given up: being worked on, or waiting out an ack wait. */
  ackPending: number;
  /** Of those, delivered more than once. */
  redelivered: number;
}

/** The jobs stream's side of the listing (JetStream only). */
export interface StreamBacklog {
  stream: string;
  /** Each agent's consumer; absent ones (no executor ever ran the agent) are left out. */
  consumers: ConsumerBacklog[];
  /** Set when the server could not be read; the journal's listing stands alone then. */
  error?: string;
}

/** `idem jobs --json`: the jobs waiting for an output, and where they stand. */
export interface JobsListing {
  /** When it was read (epoch ms): the states compare lease ends and retry times with it. */
  at: number;
  transport: "embedded" | "jetstream";
  jobs: WaitingJob[];
  /** How many jobs of the listing are in each state. */
  counts: Record<WaitingJobState, number>;
  /** True when more jobs wait than the limit let it list. */
  truncated: boolean;
  /** JetStream: the consumers' counts (`readStreamBacklog`); null on the embedded queue. */
  stream: StreamBacklog | null;
}

/** Where a journal job row stands at `now`. */
export function waitingState(job: JobEntry, now: number): WaitingJobState {
  if (job.state === "running")
    return job.leaseUntil !== null && job.leaseUntil > now ? "leased" : "expired";
  return job.nextAt !== null && job.nextAt > now ? "waiting" : "queued";
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** What happens next to a job in `state`, in words (docs/agents.md, When an executor dies). */
function nextStep(job: JobEntry, state: WaitingJobState, config: Config): string {
  const max = config.queue.maxDeliver;
  const last = job.deliveries >= max;
  const following = last
    ? `dead-lettered at its next claim (${job.deliveries} of ${max} deliveries spent)`
    : `delivery ${job.deliveries + 1} of ${max}`;
  switch (state) {
    case "leased":
      return `delivery ${job.deliveries} of ${max} held by ${job.leaseOwner ?? "?"} until ${iso(job.leaseUntil as number)}; if that executor died, the job waits until then, then the next claim takes it over`;
    case "expired":
      return `the lease of ${job.leaseOwner ?? "?"} ended at ${iso(job.leaseUntil ?? 0)} with no output (its executor died or stalled): the next claim takes it over, ${following}`;
    case "waiting":
      return `delivery ${job.deliveries} failed (${job.lastClass ?? "?"}); tried again at ${iso(job.nextAt as number)}, ${following}`;
    default:
      if (config.nats) {
        return job.streamSeq === null
          ? "not in the stream yet: an executor's outbox sweep publishes it (at start, after a reconnect, every 30 s)"
          : `in stream ${config.nats.stream} (seq ${job.streamSeq}): the consumer of agent ${job.agent} delivers it`;
      }
      return `due: the next idle executor running agent ${job.agent} takes it (${following})`;
  }
}

/**
 * A job row without an output (queued or running: see `waitingState`) as a listing shows it at
 * `now`, with what happens to it next. Pure.
 */
export function describeWaitingJob(row: JobEntry, now: number, config: Config): WaitingJob {
  const state = waitingState(row, now);
  return {
    jobId: row.jobId,
    agent: row.agent,
    state,
    deliveries: row.deliveries,
    maxDeliver: config.queue.maxDeliver,
    holder: row.leaseOwner,
    leaseUntil: row.state === "running" ? row.leaseUntil : null,
    nextAt: state === "waiting" ? row.nextAt : null,
    lastError: row.lastError,
    lastClass: row.lastClass,
    createdAt: row.createdAt,
    streamSeq: row.streamSeq,
    next: nextStep(row, state, config),
  };
}

/**
 * The jobs waiting for an output (`journal.jobs.list`), each with its state at `now`, holder,
 * deliveries out of `queue.maxDeliver`, lease end, next try and what happens next. On JetStream
 * the journal knows the jobs enqueued through idem (its outbox) and those a delivery claimed; the
 * stream's own counts come from `readStreamBacklog`, set here as `stream` when given. Read-only.
 */
export async function listJobs(
  journal: JournalStore,
  config: Config,
  options: { now?: number; agent?: string; limit?: number; stream?: StreamBacklog | null } = {},
): Promise<JobsListing> {
  const at = options.now ?? Date.now();
  const limit = options.limit ?? 100;
  const rows = await journal.jobs.list({
    ...(options.agent === undefined ? {} : { agent: options.agent }),
    limit: limit + 1,
  });
  const counts: Record<WaitingJobState, number> = { queued: 0, waiting: 0, leased: 0, expired: 0 };
  const jobs = rows.slice(0, limit).map((row) => {
    const job = describeWaitingJob(row, at, config);
    counts[job.state] += 1;
    return job;
  });
  return {
    at,
    transport: config.nats ? "jetstream" : "embedded",
    jobs,
    counts,
    truncated: rows.length > limit,
    stream: options.stream ?? null,
  };
}
