import type { Config, NatsConfig } from "@idem/schema";
import type { JetStreamManager } from "@nats-io/jetstream";
import { connectNats } from "./connect.js";
import {
  differences,
  expectedAgentConsumer,
  expectedJobsStream,
  expectedPublishStream,
  type FieldDifference,
  type PublishStreamTarget,
  streamCaptures,
} from "./expected-config.js";
import { loadJetStream } from "./nats-client.js";
import { isNotFound } from "./provisioning.js";

/** A stream or consumer config as the server answers it, as plain JSON (`subjects`, `max_age`, ...). */
export type ServerConfig = Readonly<Record<string, unknown>>;

/**
 * Read-only access to one NATS server's JetStream, for checks such as `idem doctor`. It never
 * creates, updates or deletes anything.
 */
export interface JetStreamInspector {
  /**
   * The config of stream `name`, or `"missing"` when the server has no such stream.
   * @throws the client's error for any other failure (timeout, no JetStream, permissions).
   */
  streamConfig(name: string): Promise<ServerConfig | "missing">;
  /**
   * The config of durable consumer `name` on `stream`, or `"missing"` (no such stream or consumer).
   * @throws the client's error for any other failure.
   */
  consumerConfig(stream: string, name: string): Promise<ServerConfig | "missing">;
  /**
   * What durable consumer `name` on `stream` holds right now, as the server counts it, or
   * `"missing"` (no such stream or consumer).
   * @throws the client's error for any other failure.
   */
  consumerCounts(stream: string, name: string): Promise<ConsumerCounts | "missing">;
  /** Closes the connection at once (nothing was published). */
  close(): Promise<void>;
}

/** A consumer's backlog as the server counts it (`num_pending`, `num_ack_pending`, ...). */
export interface ConsumerCounts {
  /** Messages of its subjects not delivered yet. */
  pending: number;
  /** Messages delivered and neither acked nor given up: being worked on, or waiting out an ack wait. */
  ackPending: number;
  /** Of those, delivered more than once. */
  redelivered: number;
}

/** Options of `openJetStreamInspector`. */
export interface OpenJetStreamInspectorOptions {
  /** Bound on connecting and on each JetStream API request. */
  timeoutMs: number;
  /** Connection name shown in server monitoring (default "idem-doctor"). */
  name?: string;
}

/**
 * Connects to `url` and opens the JetStream API, each bounded by `timeoutMs`, for read-only
 * inspection. No retry: a server that does not answer in time is an answer.
 * @throws Error "no answer within <timeoutMs> ms" when the connection does not open in time, or
 * the client's error when JetStream is not enabled; the connection is closed before throwing.
 */
export async function openJetStreamInspector(
  url: string,
  options: OpenJetStreamInspectorOptions,
): Promise<JetStreamInspector> {
  const { timeoutMs } = options;
  let timer: NodeJS.Timeout | undefined;
  const nc = await Promise.race([
    connectNats(url, options.name ?? "idem-doctor"),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  let jsm: JetStreamManager;
  try {
    jsm = await (await loadJetStream()).jetstreamManager(nc, { timeout: timeoutMs });
  } catch (e) {
    await nc.close();
    // Connected, so the server is there: JetStream is off, or a cluster has no meta leader (lost
    // its quorum, or is electing one), which nats.js reports as "jetstream is not enabled" too.
    throw new Error(
      `connected, but JetStream does not answer (${(e as Error).message}): is it enabled, and does the cluster have a quorum?`,
      { cause: e },
    );
  }
  const orMissing = async (read: () => Promise<{ config: object }>) => {
    try {
      return { ...(await read()).config } as ServerConfig;
    } catch (e) {
      if (isNotFound(e)) return "missing" as const;
      throw e;
    }
  };
  return {
    streamConfig: (name) => orMissing(() => jsm.streams.info(name)),
    consumerConfig: (stream, name) => orMissing(() => jsm.consumers.info(stream, name)),
    async consumerCounts(stream, name) {
      try {
        const info = await jsm.consumers.info(stream, name);
        return {
          pending: info.num_pending,
          ackPending: info.num_ack_pending,
          redelivered: info.num_redelivered,
        };
      } catch (e) {
        if (isNotFound(e)) return "missing";
        throw e;
      }
    },
    close: () => nc.close(),
  };
}

/**
 * Reads the jobs stream back and compares it with `expectedJobsStream(nats)`: `"missing"`, or the
 * differing fields (empty when it is as provisioned). Read-only.
 * @throws the client's error when the stream cannot be read for another reason.
 */
export async function inspectJobsStream(
  inspector: JetStreamInspector,
  nats: NatsConfig,
): Promise<FieldDifference[] | "missing"> {
  const expected = expectedJobsStream(nats);
  const actual = await inspector.streamConfig(expected.name);
  return actual === "missing" ? actual : differences(expected.fields, actual);
}

/**
 * Reads the durable consumer of `agent` back and compares it with `expectedAgentConsumer`:
 * `"missing"`, or the differing fields. Read-only.
 * @throws the client's error when the consumer cannot be read for another reason.
 */
export async function inspectAgentConsumer(
  inspector: JetStreamInspector,
  config: Pick<Config, "queue"> & { nats: NatsConfig },
  agent: string,
): Promise<FieldDifference[] | "missing"> {
  const expected = expectedAgentConsumer(config, agent);
  const actual = await inspector.consumerConfig(expected.stream, expected.name);
  return actual === "missing" ? actual : differences(expected.fields, actual);
}

/** What a publish target's stream looks like on its server. */
export interface PublishStreamState {
  /** The stream's subjects as the server holds them. */
  subjects: string[];
  /** Whether they capture `<subjectPrefix>.>`. */
  captures: boolean;
  /** Its replicas (`num_replicas`; 1 when the server leaves it out). */
  replicas: number;
}

/**
 * Reads a publish target's stream back: `"missing"`, or its subjects and whether they capture
 * `<subjectPrefix>.>` (`expectedPublishStream`). Read-only.
 * @throws the client's error when the stream cannot be read for another reason.
 */
export async function inspectPublishStream(
  inspector: JetStreamInspector,
  target: PublishStreamTarget,
): Promise<PublishStreamState | "missing"> {
  const expected = expectedPublishStream(target);
  const actual = await inspector.streamConfig(expected.name);
  if (actual === "missing") return actual;
  const subjects = (actual.subjects as string[] | undefined) ?? [];
  const replicas = typeof actual.num_replicas === "number" ? actual.num_replicas : 1;
  return { subjects, captures: streamCaptures(expected, subjects), replicas };
}
