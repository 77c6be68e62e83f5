import type { Delivery } from "@idem/core/execute";
import type { JournalStore } from "@idem/journal";
import type { Logger, Tracing } from "@idem/runtime";
import type { Clock, Config } from "@idem/schema";

/**
 * Where the executor's work comes from: the JetStream consumers, the embedded queue (the journal's
 * jobs table) or the NATS submit responder. The executor starts each once and stops each once on
 * shutdown (or at once, not awaited, when the journal fails for good).
 */
export interface ExecutorTransport {
  /**
   * Starts taking work.
   * @throws INVARIANT_VIOLATION for a stream or consumer that differs from the config; the
   * transport's connection errors as they are.
   */
  start(): Promise<void>;
  /**
   * Stops taking new work and resolves when its loops have ended; deliveries in flight go on (the
   * executor waits for them). Idempotent.
   */
  stop(): Promise<void>;
}

/** What the executor gives its transports. */
export interface TransportContext {
  readonly config: Config;
  readonly journal: JournalStore;
  readonly log: Logger;
  readonly clock: Clock;
  /** This executor's name in journal leases. */
  readonly owner: string;
  /** This process's tracing, for the submit spans of the NATS submit responder; default off. */
  readonly tracing?: Tracing;
  /** The agents this executor consumes. */
  readonly agents: readonly string[];
  /** Aborted when the executor stops (or the journal fails for good). */
  readonly stopSignal: AbortSignal;
  /** The agent's timeout, also the lease of its in-progress claim. */
  timeoutOf(agent: string): number;
  /**
   * Works on one delivery (see `DeliveryHandler.handle`), counted in flight until it settles. A
   * failure is logged here ("delivery handler failed") and still rejects the returned promise, for
   * a caller that reports it too; ignoring it is safe.
   */
  deliver(d: Delivery, heartbeatMs: number): Promise<void>;
  /** Deliveries in flight right now. */
  inFlight(): number;
  /** Resolves when one of the deliveries in flight settles. */
  anySettled(): Promise<void>;
  /** True while this process runs (or records) the job. */
  isWorking(jobId: string): boolean;
  /** Counts a dead letter and raises the alert when due. Never throws. */
  deadLettered(jobId: string): Promise<void>;
  /** True when the journal has failed for good (see `JournalStore.failure`). */
  journalFailed(): boolean;
}
