import type { Clock, Job, NatsConfig } from "@idem/schema";
import { IdemError, retry, systemClock } from "@idem/schema";
import type { JetStreamClient, PubAck } from "@nats-io/jetstream";
import { loadTransport } from "./nats-client.js";
import { isNatsUnavailable } from "./nats-unavailable.js";
import { jobSubject } from "./subjects.js";

/** The answer of the jobs stream to one publish. */
export interface PublishResult {
  jobId: string;
  stream: string;
  seq: number;
  /** True when the stream already held this msg id inside its duplicate window. */
  duplicate: boolean;
}

/** Options of one `JobPublisher.publish`. */
export interface PublishOptions {
  /** The Nats-Msg-Id; default the job ID (`<jobId>#retry-<n>` for a dead-letter retry). */
  msgId?: string;
  /**
   * The W3C trace context sent as the `traceparent` header, so the executor's delivery continues
   * the enqueue's trace. Passed as it is: the caller validates it.
   */
  traceparent?: string | undefined;
}

/** The NATS header that carries a job's W3C trace context. */
export const TRACEPARENT_HEADER = "traceparent";

/** Publishes jobs to `<subjectPrefix>.jobs.<agent>` with `Nats-Msg-Id`, for orchestrators and `idem enqueue`. */
export interface JobPublisher {
  /**
   * Publishes one job and waits for the stream's PubAck. Idempotent within the stream's duplicate
   * window (the same msg id is stored once and answered `duplicate`). A publish that times out or
   * finds no responder (server restarting, client reconnecting) is retried with the same msg id
   * until `nats.publishRetryMs` has passed.
   * @throws UNAVAILABLE when no PubAck came within `publishRetryMs`.
   */
  publish(job: Job, options?: PublishOptions): Promise<PublishResult>;
}

/** The JetStream client and config a job publisher publishes with. */
export interface CreateJobPublisherOptions {
  js: JetStreamClient;
  nats: NatsConfig;
  clock?: Clock;
  /** Per-attempt PubAck timeout; default 2 s. */
  attemptTimeoutMs?: number;
}

/** A timed-out publish is tried again with the same msg id: 50 ms, doubling to 1 s. */
const PUBLISH_BACKOFF = { initialMs: 50, maxMs: 1_000 } as const;

/**
 * Creates a {@link JobPublisher} on a JetStream client. Opens nothing; each publish retries a
 * timed-out attempt with the same msg id (backoff 50 ms doubling to 1 s) until
 * `nats.publishRetryMs` has passed, so a retry never stores the job twice inside the duplicate window.
 */
export function createJobPublisher(options: CreateJobPublisherOptions): JobPublisher {
  const { js, nats } = options;
  const clock = options.clock ?? systemClock;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 2_000;
  return {
    async publish(job, publishOptions = {}) {
      const msgID = publishOptions.msgId ?? job.jobId;
      const subject = jobSubject(nats.subjectPrefix, job.agent);
      const data = JSON.stringify(job);
      const deadline = clock.now() + nats.publishRetryMs;
      const traceparent = publishOptions.traceparent;
      const headers = traceparent === undefined ? undefined : (await loadTransport()).headers();
      if (headers && traceparent !== undefined) headers.set(TRACEPARENT_HEADER, traceparent);
      const options = { msgID, timeout: attemptTimeoutMs, ...(headers ? { headers } : {}) };
      let ack: PubAck;
      try {
        ack = await retry(() => js.publish(subject, data, options), {
          ...PUBLISH_BACKOFF,
          retryable: (e) => isNatsUnavailable(e) && clock.now() < deadline,
        });
      } catch (e) {
        throw new IdemError("UNAVAILABLE", `publishing job ${job.jobId} to ${subject} failed`, {
          cause: e,
          details: { jobId: job.jobId, subject, msgId: msgID },
        });
      }
      return { jobId: job.jobId, stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
    },
  };
}
