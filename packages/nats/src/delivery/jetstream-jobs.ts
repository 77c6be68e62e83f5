import type { Clock, Config, NatsConfig, ValidationIssue } from "@idem/schema";
import { validateJob } from "@idem/schema";
import type { NatsConnection } from "@nats-io/transport-node";
import { type DeadLetterAdvisory, startDeadLetterMonitor } from "../dead-letter-monitor.js";
import { createJobPublisher, type JobPublisher } from "../job-publisher.js";
import { type MessageLoop, startMessageLoop } from "../message-loop.js";
import { loadJetStream } from "../nats-client.js";
import {
  type AgentConsumer,
  ensureAgentConsumer,
  ensureDeadLetterStream,
  ensureJobsStream,
} from "../provisioning.js";
import { JetStreamJobMessage } from "./jetstream-job-message.js";

/** Where the executor's jobs come from on JetStream. */
export interface OpenJetStreamJobsOptions {
  /** An open connection; not closed by these jobs. */
  nc: NatsConnection;
  config: Pick<Config, "queue"> & { nats: NatsConfig };
  /** The agents whose consumers are provisioned and consumed. */
  agents: readonly string[];
  clock?: Clock;
}

/** What {@link JetStreamJobs.consume} hands each message and each event to. */
export interface ConsumeJobsHandlers {
  /**
   * Works on one valid job message and settles it (ack, nak or term). `heartbeatMs` is how often
   * to call `working()` (a third of the shortest ack wait the server applies). At most
   * `queue.maxAckPending` run at once per consumer; a rejection is reported to `onError`.
   */
  deliver(message: JetStreamJobMessage, heartbeatMs: number): Promise<void>;
  /** A message that is not a valid job for its consumer; it has been terminated. */
  onInvalid(message: { subject: string; seq: number; issues: ValidationIssue[] | undefined }): void;
  /** A consumer loop's error (the loop goes on). */
  onError(error: unknown, consumer: string): void;
  /**
   * A job JetStream gave up on (see `startDeadLetterMonitor`): must be idempotent; a throw
   * redelivers the advisory.
   */
  onDeadLetter(advisory: DeadLetterAdvisory): Promise<void>;
  /** An error of the dead-letter monitor (the monitor goes on). */
  onDeadLetterError(error: unknown): void;
  /** The connection was lost or found again. */
  onStatus(status: "disconnect" | "reconnect"): void;
}

/** The jobs stream, its dead letters and the agents' consumers, provisioned on one connection. */
export interface JetStreamJobs {
  /** Publishes jobs to the stream (the outbox republish, `idem enqueue`). */
  readonly publisher: JobPublisher;
  /** The consumers of the agents, as the server applies them. */
  readonly consumers: readonly AgentConsumer[];
  /**
   * True when the stream holds the job at `streamSeq` (its Nats-Msg-Id is the job ID, or a retry
   * of it); false when that message is gone, is another one, or cannot be read.
   */
  holds(streamSeq: number, jobId: string): Promise<boolean>;
  /**
   * Ends the delivery of the message at `streamSeq` to `agent`'s consumer now, whoever holds it (a
   * `-NAK` on its ack subject): JetStream delivers it again at once instead of after its ack wait.
   * For the delivery of an executor found dead, which can no longer settle it. The ack subject is
   * rebuilt from what the server keeps (`$JS.ACK.<stream>.<consumer>.<n>.<stream seq>.<consumer
   * seq>.<ts>.<pending>`, ADR-15): the server takes a nak for any message still pending, with a
   * consumer sequence it has delivered and not acked, so the consumer's last delivered sequence
   * stands for the unknown one. Answers false, sending nothing, when the consumer is not this
   * executor's or has nothing pending at or below `streamSeq`.
   * @throws the JetStream API's error when the consumer cannot be read.
   */
  endDelivery(agent: string, streamSeq: number, deliveries: number): Promise<boolean>;
  /** Starts the consumer loops and the dead-letter monitor. Call once. */
  consume(handlers: ConsumeJobsHandlers): Promise<void>;
  /** Stops pulling and waits for the handlers in flight. Idempotent; the connection stays open. */
  stop(): Promise<void>;
}

/**
 * Provisions the jobs stream, the dead-letter advisory stream and one durable consumer per agent
 * (idempotent; safe from several executors at once), ready to consume.
 * @throws INVARIANT_VIOLATION when the server's stream or a consumer differs from what the config
 * states (see `ensureJobsStream`, `ensureAgentConsumer`); JetStream errors as they are.
 */
export async function openJetStreamJobs(options: OpenJetStreamJobsOptions): Promise<JetStreamJobs> {
  const { nc, config, agents } = options;
  const { nats, queue } = config;
  const { jetstream, jetstreamManager } = await loadJetStream();
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  await ensureJobsStream(jsm, nats);
  await ensureDeadLetterStream(jsm, nats);
  const publisher = createJobPublisher({
    js,
    nats,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const consumers: AgentConsumer[] = [];
  for (const agent of agents)
    consumers.push(await ensureAgentConsumer(jsm, { nats, queue }, agent));
  const loops: MessageLoop[] = [];

  return {
    publisher,
    consumers,
    async holds(streamSeq, jobId) {
      const found = await jsm.streams.getMessage(nats.stream, { seq: streamSeq }).catch(() => null);
      const msgId = found?.header?.get("Nats-Msg-Id") ?? "";
      return !!found && (msgId === jobId || msgId.startsWith(`${jobId}#`));
    },
    async endDelivery(agent, streamSeq, deliveries) {
      const c = consumers.find((x) => x.agent === agent);
      if (!c) return false;
      const info = await jsm.consumers.info(c.stream, c.name);
      const dseq = info.delivered.consumer_seq;
      if (streamSeq <= info.ack_floor.stream_seq || dseq <= info.ack_floor.consumer_seq)
        return false;
      const ts = Date.now() * 1_000_000;
      nc.publish(
        `$JS.ACK.${c.stream}.${c.name}.${Math.max(1, deliveries)}.${streamSeq}.${dseq}.${ts}.0`,
        "-NAK",
      );
      await nc.flush();
      return true;
    },
    async consume(handlers) {
      (async () => {
        for await (const s of nc.status()) {
          if (s.type === "disconnect" || s.type === "reconnect") handlers.onStatus(s.type);
        }
      })().catch(() => {});
      for (const c of consumers) {
        const heartbeatMs = Math.max(
          20,
          Math.floor(Math.min(c.effectiveAckWaitMs, queue.ackWaitMs, ...queue.backoffMs) / 3),
        );
        loops.push(
          startMessageLoop({
            js,
            stream: c.stream,
            consumer: c.name,
            concurrency: queue.maxAckPending,
            onError: (e) => handlers.onError(e, c.name),
            handler: async (msg) => {
              let parsed: unknown;
              try {
                parsed = msg.json();
              } catch {
                parsed = undefined;
              }
              const v = validateJob(parsed);
              if (!v.ok || v.value.agent !== c.agent) {
                handlers.onInvalid({
                  subject: msg.subject,
                  seq: msg.seq,
                  issues: v.ok ? undefined : v.issues,
                });
                msg.term();
                return;
              }
              await handlers.deliver(new JetStreamJobMessage(msg, v.value), heartbeatMs);
            },
          }),
        );
      }
      loops.push(
        await startDeadLetterMonitor({
          js,
          jsm,
          nats,
          onDeadLetter: handlers.onDeadLetter,
          onError: handlers.onDeadLetterError,
        }),
      );
      await nc.flush();
    },
    async stop() {
      await Promise.allSettled(loops.map((l) => l.stop()));
    },
  };
}
