import type { Job } from "@idem/schema";
import type { JsMsg } from "@nats-io/jetstream";
import { TRACEPARENT_HEADER } from "../job-publisher.js";

/** How long an ack waits for the server's confirmation. */
const ACK_TIMEOUT_MS = 5_000;

/**
 * One JetStream delivery of a valid job, with the only ways to settle it. The executor decides
 * which one (record before ack); this class only speaks JetStream. Made once per message.
 */
export class JetStreamJobMessage {
  readonly #msg: JsMsg;
  /** The job, validated and consumed by its agent's consumer. */
  readonly job: Job;

  constructor(msg: JsMsg, job: Job) {
    this.#msg = msg;
    this.job = job;
  }

  /** Deliveries of this message so far, this one included (JetStream's count). */
  get deliveries(): number {
    return this.#msg.info.deliveryCount;
  }

  /** The `traceparent` header the job was published with (its enqueue's trace), if any. */
  get traceparent(): string | undefined {
    return this.#msg.headers?.get(TRACEPARENT_HEADER) || undefined;
  }

  /** The message's sequence in the jobs stream. */
  get streamSeq(): number {
    return this.#msg.seq;
  }

  /** Tells JetStream the job is being worked on: its ack wait starts again. */
  working(): void {
    this.#msg.working();
  }

  /**
   * Acks for good and waits for the server to confirm (5 s at most).
   * @throws the timeout or connection error when no confirmation came: the message may be
   * redelivered, which the journal's record makes harmless.
   */
  ack(): Promise<boolean> {
    return this.#msg.ackAck({ timeout: ACK_TIMEOUT_MS });
  }

  /** Gives the message back, to be redelivered after `delayMs`. Fire and forget. */
  nak(delayMs: number): void {
    this.#msg.nak(delayMs);
  }

  /** Never delivers this message again (JetStream then raises a MSG_TERMINATED advisory). */
  term(): void {
    this.#msg.term();
  }
}
