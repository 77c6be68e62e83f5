import type { JobClaimResult, JobLease, JournalStore } from "@idem/journal";
import type { Logger, Tracing } from "@idem/runtime";
import type { Clock, Config, FaultHook, Job } from "@idem/schema";
import type { RecordMetrics } from "../record/index.js";

/** One delivery of one job, whatever the transport (a JetStream message, a journal queue row). */
export interface Delivery {
  readonly job: Job;
  /** Deliveries of this job on its transport, this one included. */
  readonly deliveries: number;
  /** The W3C trace context the job travels with (a NATS header, the job row), if any. */
  readonly traceparent?: string | undefined;
  claim(): Promise<JobClaimResult>;
  heartbeat(lease: JobLease | undefined): Promise<void>;
  /** The output is recorded (or was already): settle the delivery for good. */
  ack(): Promise<void>;
  /** Give the delivery back to be redelivered after `delayMs`. */
  later(delayMs: number): Promise<void>;
  /** Never deliver this message again (dead-lettered). */
  giveUp(): Promise<void>;
}

/** A counter as the executor's decision uses it, by label or without (prom-client's Counter fits). */
export type ExecuteCounter<L extends string = never> = [L] extends [never]
  ? { inc(): void }
  : { inc(labels: Partial<Record<L, string>>): void };

/** What the executor's decision counts and times, beside what a record counts. */
export interface ExecuteMetrics extends RecordMetrics {
  readonly deliveries: ExecuteCounter<"transport">;
  readonly skippedRedeliveries: ExecuteCounter;
  readonly naks: ExecuteCounter<"reason">;
  readonly recordRetries: ExecuteCounter;
  readonly agentRunSeconds: {
    observe(labels: Partial<Record<"agent" | "outcome", string>>, seconds: number): void;
  };
}

/** What the executor's decision works with; built once per executor. */
export interface DeliveryHandlerOptions {
  config: Config;
  journal: JournalStore;
  /**
   * Runs the job's agent once and answers its raw output (the executor's runner, with the agent's
   * timeout); aborting `cancel` ends the run at once.
   * @throws what the agent's run throws (a timeout, a crash): the delivery fails
   */
  runAgent(job: Job, log: Logger, cancel: AbortSignal): Promise<unknown>;
  log: Logger;
  metrics: ExecuteMetrics;
  fault: FaultHook;
  clock: Clock;
  owner: string;
  transport: "jetstream" | "embedded";
  /**
   * True when the journal has failed for good; the first call stops the executor taking
   * deliveries and aborts `fatalSignal`.
   */
  journalFailed(): boolean;
  /**
   * Aborted when the journal fails for good, or when a stopping executor abandons what runs (its
   * stop grace is over): agents still running are stopped, not waited for.
   */
  fatalSignal: AbortSignal;
  /**
   * True once the executor abandons its deliveries (see `Executor.stop`): a run stopped then is
   * given back (`jobs.release`: due at once, the delivery uncounted), neither failed nor
   * dead-lettered, and reported to `onAbandoned`.
   */
  abandoning?(): boolean;
  /** Told of each job given back by an abandoning executor. */
  onAbandoned?(jobId: string): void;
  /** Told of each job dead-lettered here (the executor counts it and raises its alert). Never throws. */
  onDeadLetter(jobId: string): Promise<void>;
  /** Spans of each delivery, agent run and record (continuing the job's trace); off by default. */
  tracing: Tracing;
}

/** The executor's decision for each delivery: record before ack (invariants 3 and 4 of docs/concepts.md). */
export interface DeliveryHandler {
  /**
   * Works on one delivery and settles it: a job whose output is recorded is acked without running
   * the agent (with a `redelivery.skipped` event); one held by another delivery, or in progress in
   * this process, is given back for later; otherwise the job's in-progress claim is taken, the
   * agent runs once with heartbeats every `heartbeatMs`, its output is validated and recorded
   * (retried for as long as the journal is briefly unavailable) and only then acked. A failed run
   * is given back after `queue.backoffMs`, and dead-lettered at `queue.maxDeliver`. When the
   * journal has failed for good the delivery is left unsettled for a healthy executor.
   * @throws what the journal throws when it cannot claim or note the skip; the caller logs it.
   */
  handle(d: Delivery, heartbeatMs: number): Promise<void>;
  /** True while this process runs (or records) the job: a second delivery must not run it. */
  isWorking(jobId: string): boolean;
  /** The jobs this process runs (or records) right now. */
  inProgress(): string[];
  /** Counts a dead letter and raises the dead-letter alert when due. Never throws. */
  deadLettered(jobId: string): Promise<void>;
}

/** The longest wait between two attempts of a record the journal could not take. */
export const RECORD_RETRY_MAX_MS = 1_000;

/**
 * How long claims wait once the journal is back after an outage: two record retries at most. Leases
 * lapsed during the outage, and an output still held in memory by an executor retrying its record
 * is given time to be recorded first, so the job it ran is found recorded, not run again.
 */
export const RECOVERY_GRACE_MS = 2 * RECORD_RETRY_MAX_MS + 500;
