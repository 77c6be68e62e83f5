import type { Job, NatsConfig } from "@idem/schema";
import { validateJob } from "@idem/schema";
import type { JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { type MessageLoop, startMessageLoop } from "./message-loop.js";
import { loadJetStream } from "./nats-client.js";
import { isNotFound } from "./provisioning.js";
import { deadLetterStreamName } from "./subjects.js";

/** A job JetStream gave up on: delivered `max_deliver` times, or terminated by an executor. */
export interface DeadLetterAdvisory {
  kind: "max_deliveries" | "terminated";
  stream: string;
  consumer: string;
  streamSeq: number;
  deliveries: number;
  /** The original job, fetched by sequence; undefined when it is gone from the stream or invalid. */
  job: Job | undefined;
  /** The original message's Nats-Msg-Id (`<jobId>` or `<jobId>#retry-<n>`). */
  msgId: string | undefined;
}

/** What `startDeadLetterMonitor` consumes with and whom it tells. */
export interface StartDeadLetterMonitorOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  nats: NatsConfig;
  /**
   * Records the dead letter (the executor: `journal.deadLetterJob`). The advisory is acked only
   * after it resolves, so a throw means it comes back later: the handler must be idempotent.
   */
  onDeadLetter: (advisory: DeadLetterAdvisory) => Promise<void>;
  onError?: (error: unknown) => void;
  /** Redelivery delay of an advisory whose handler threw; default 1 s. */
  retryDelayMs?: number;
}

/** The durable consumer every executor shares on the dead-letter advisory stream. */
export const DEAD_LETTER_CONSUMER = "idem-dead-letters";

/**
 * Consumes the dead-letter advisory stream (see `ensureDeadLetterStream`) with a durable consumer,
 * fetches each original job by its stream sequence and hands it to `onDeadLetter`. At-least-once:
 * several executors share the durable, and a handler failure redelivers the advisory after
 * `retryDelayMs`; an advisory that is not JSON is terminated. The consumer is created only when
 * JetStream says it is missing.
 * @throws the client's error when the consumer cannot be read or created (timeout, no stream).
 */
export async function startDeadLetterMonitor(
  options: StartDeadLetterMonitorOptions,
): Promise<MessageLoop> {
  const { js, jsm, nats } = options;
  const stream = deadLetterStreamName(nats.stream);
  try {
    await jsm.consumers.info(stream, DEAD_LETTER_CONSUMER);
  } catch (e) {
    // Only a missing consumer is created; a timeout or a refused request must reach the caller.
    if (!isNotFound(e)) throw e;
    const { AckPolicy, DeliverPolicy } = await loadJetStream();
    await jsm.consumers.add(stream, {
      durable_name: DEAD_LETTER_CONSUMER,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: 30_000_000_000,
    });
  }
  const onError = options.onError ?? (() => {});
  const handler = async (msg: JsMsg): Promise<void> => {
    let body: {
      type?: string;
      stream?: string;
      consumer?: string;
      stream_seq?: number;
      deliveries?: number;
    };
    try {
      body = msg.json();
    } catch (e) {
      onError(e);
      msg.term();
      return;
    }
    const kind = msg.subject.includes(".MAX_DELIVERIES.") ? "max_deliveries" : "terminated";
    const streamSeq = Number(body.stream_seq ?? 0);
    let job: Job | undefined;
    let msgId: string | undefined;
    try {
      const original = await jsm.streams.getMessage(body.stream ?? nats.stream, { seq: streamSeq });
      if (original) {
        msgId = original.header?.get("Nats-Msg-Id") || undefined;
        const v = validateJob(original.json());
        if (v.ok) job = v.value;
      }
    } catch (e) {
      onError(e);
    }
    try {
      await options.onDeadLetter({
        kind,
        stream: body.stream ?? nats.stream,
        consumer: body.consumer ?? "",
        streamSeq,
        deliveries: Number(body.deliveries ?? 0),
        job,
        msgId,
      });
    } catch (e) {
      onError(e);
      msg.nak(options.retryDelayMs ?? 1_000);
      return;
    }
    await msg.ackAck().catch(onError);
  };
  return startMessageLoop({
    js,
    stream,
    consumer: DEAD_LETTER_CONSUMER,
    concurrency: 1,
    handler,
    onError,
  });
}
