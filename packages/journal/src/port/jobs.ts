import type { FailureClass, Job } from "@idem/schema";
import type { JobState } from "../domain/states.js";
import type { JournalLeaseHolders } from "./lease-holders.js";

/** A job in the queue/outbox, with its input and delivery state. */
export interface JobRecord {
  jobId: string;
  agent: string;
  input: unknown;
  /** See `jobInput`: what tells the same job from a conflicting one. */
  inputHash: string;
  state: JobState;
  deliveries: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  nextAt: number | null;
  streamSeq: number | null;
  lastError: string | null;
  /** The failure class of the last failed delivery. */
  lastClass: FailureClass | null;
  createdAt: number;
  updatedAt: number;
  /**
   * The W3C trace context the job was enqueued under, when it had one (absent otherwise): the
   * embedded queue's delivery continues that trace. Written once with the job, never changed.
   */
  traceparent?: string;
}

/** A job as a listing shows it: its row without its input or trace context. */
export type JobEntry = Omit<JobRecord, "input" | "traceparent">;

/**
 * The answer to an enqueue: `enqueued` (new), `duplicate` (same job ID and input) or `conflict`
 * (another input under the ID: refused, with a `job.conflict` event).
 */
export type EnqueueResult =
  | { status: "enqueued"; jobId: string; seq: number }
  | { status: "duplicate"; jobId: string; seq: number }
  | { status: "conflict"; jobId: string };

/** A job delivery held by one executor: the in-progress claim of invariant 3. */
export interface JobLease {
  jobId: string;
  token: string;
  owner: string;
  until: number;
  /** Deliveries of this job so far, this one included. */
  deliveries: number;
}

/**
 * The answer to a delivery's claim: `acquired` (run the agent under the lease), `held` (another
 * delivery holds it until `until`), `recorded` (its output exists: ack), `dead` (dead-lettered) or
 * `conflict` (another input under the job ID).
 */
export type JobClaimResult =
  | { status: "acquired"; lease: JobLease; job: JobRecord }
  | { status: "held"; until: number }
  | { status: "recorded" }
  | { status: "dead" }
  | { status: "conflict" };

/**
 * The job queue and outbox: the embedded queue's rows and the in-progress claims of any transport.
 * The holders of the delivery leases (`leaseOwners`, `expireLeasesOf`) are for a caller that finds
 * a holder dead: a job whose lease was ended is due again at once.
 */
export interface JournalJobs extends JournalLeaseHolders {
  /**
   * Puts a job in the outbox/queue; the same job ID with another input is a conflict. `durable:
   * false` answers before an fsync: for an outbox row whose job is about to be published, where the
   * stream's PubAck is what the caller is told; make it durable before answering a failed publish.
   */
  enqueue(
    job: Job,
    options?: {
      actor?: string;
      durable?: boolean;
      /** The W3C trace context kept with a new job (a duplicate keeps the first). */
      traceparent?: string;
      /**
       * The journal is the queue (the embedded transport): the enqueue's own event, `job.enqueued`
       * for a new job or `job.duplicate`, with `{ stream: "embedded", seq }` and the actor, is
       * written in the same commit as the row (one commit per job instead of two).
       */
      queueEvent?: boolean;
    },
  ): Promise<EnqueueResult>;
  /** A job with its input, or undefined. */
  get(jobId: string): Promise<JobRecord | undefined>;
  /**
   * Notes the job's stream sequence, with an event in the same transaction when one is given. A
   * note: not fsynced on its own (the outbox republish dedups by message ID).
   */
  setStreamSeq(
    jobId: string,
    seq: number,
    event?: { type: string; data?: Record<string, unknown>; actor: string },
  ): Promise<void>;
  /**
   * Embedded queue: the next due job, leased; one delivered `maxDeliver` times is dead-lettered
   * instead (durable before it is answered). The lease itself may not be fsynced on its own (a
   * lost claim is a lost lease: the job is due again and delivered again, as after a lapse).
   */
  claimNext(options: {
    owner: string;
    leaseMs: number;
    agents?: readonly string[];
    maxDeliver?: number;
    /** Told, after the commit, the jobs this call dead-lettered on its way (deliveries used up). */
    onDeadLettered?: (jobIds: string[]) => void;
  }): Promise<{ lease: JobLease; job: JobRecord } | undefined>;
  /**
   * The in-progress claim of a delivered job (any transport). Creates the job row for a job
   * published by another client. `recorded` when its output exists (durable before it is
   * answered, since the delivery is acked on it); `held` while another delivery holds it; `dead`
   * once dead-lettered. The lease may not be fsynced on its own, as in `claimNext`.
   */
  claim(
    job: Job,
    options: {
      owner: string;
      leaseMs: number;
      /** The delivery's stream sequence, noted with the lease (for the outbox republish). */
      streamSeq?: number;
      /** The delivery's W3C trace context, kept with a job row this claim creates. */
      traceparent?: string;
    },
  ): Promise<JobClaimResult>;
  /**
   * Extends a delivery's claim by `leaseMs` from now; may not be fsynced on its own (a lost
   * extension leaves the shorter lease, as a late heartbeat does).
   * @throws LEASE_LOST when the token is stale.
   */
  extendLease(lease: JobLease, leaseMs: number): Promise<JobLease>;
  /**
   * A failed delivery: back to queued, due at `nextAt`.
   * @throws LEASE_LOST when the token is stale.
   */
  fail(
    lease: JobLease,
    failure: { class: FailureClass; error: string; nextAt: number },
  ): Promise<void>;
  /**
   * A delivery given back unfinished because its executor is stopping (its agent was killed at the
   * end of the stop grace): back to queued, due now, and the delivery not counted (the job did not
   * fail: its next delivery has the number this one had), with a `job.released` event naming why.
   * @throws LEASE_LOST when the token is stale.
   */
  release(lease: JobLease, release: { reason: string }): Promise<void>;
  /** Outbox jobs with neither an output nor a dead letter, created at or after `since`. */
  pending(options?: { since?: number; limit?: number }): Promise<JobRecord[]>;
  /**
   * Jobs still waiting for an output: queued (due now or at a later time) or running under a
   * delivery's lease (which may have ended without an output: its holder died or stalled), in
   * enqueue order, without their input; with `agent`, only that agent's; `limit` at most (default
   * every one); with `state`, only the queued or only the running ones. Read through the due-jobs
   * index: the cost follows the unfinished jobs, not the journal's history. Read-only.
   */
  list(options?: {
    agent?: string;
    state?: "queued" | "running";
    limit?: number;
  }): Promise<JobEntry[]>;
  /** How many jobs were enqueued (created) at or after `since`; all of them without it. */
  count(options?: { since?: number }): Promise<number>;
}
