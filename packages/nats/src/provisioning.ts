import type { Config, NatsConfig } from "@idem/schema";
import { IdemError } from "@idem/schema";
import type {
  ConsumerConfig,
  ConsumerInfo,
  JetStreamManager,
  StreamConfig,
  StreamInfo,
} from "@nats-io/jetstream";
import {
  differences,
  type ExpectedField,
  type ExpectedStream,
  expectedAgentConsumer,
  expectedDeadLetterStream,
  expectedJobsStream,
  type FieldDifference,
} from "./expected-config.js";
import { millis, nanos } from "./subjects.js";

/** What the executor consumes with: the durable's name and the values the server actually applies. */
export interface AgentConsumer {
  stream: string;
  name: string;
  agent: string;
  /**
   * The effective ack wait: with a backoff, nats-server 2.9 stores `ack_wait = backoff[0]`, and
   * every later redelivery waits at least that long; the heartbeat must beat well inside it.
   */
  effectiveAckWaitMs: number;
  info: ConsumerInfo;
}

function refuse(what: string, diff: FieldDifference, hint: string): never {
  throw new IdemError(
    "INVARIANT_VIOLATION",
    `${what}: ${diff.field} is ${JSON.stringify(diff.actual)} on the server, expected ${JSON.stringify(diff.expected)}; ${hint}`,
    { details: { field: diff.field, expected: diff.expected, actual: diff.actual } },
  );
}

const firstDifference = (
  fields: readonly ExpectedField[],
  config: object,
): FieldDifference | undefined => differences(fields, config as Record<string, unknown>)[0];

/**
 * A JetStream "stream not found" or "consumer not found" answer (API codes 10059 and 10014, or a
 * message saying "not found"). Pure.
 */
export function isNotFound(e: unknown): boolean {
  const err = e as { code?: unknown; api_error?: { err_code?: number }; message?: string };
  const apiCode = err?.api_error?.err_code;
  return (
    apiCode === 10059 || // stream not found
    apiCode === 10014 || // consumer not found
    /not found/i.test(String(err?.message ?? ""))
  );
}

async function ensureStream(jsm: JetStreamManager, expected: ExpectedStream): Promise<StreamInfo> {
  const cfg = expected.config as Partial<StreamConfig> & { name: string };
  let info: StreamInfo;
  try {
    info = await jsm.streams.info(cfg.name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    try {
      info = await jsm.streams.add(cfg);
    } catch (addErr) {
      // Another process created it between our info and add: read what it made.
      info = await jsm.streams.info(cfg.name).catch(() => {
        throw addErr;
      });
    }
  }
  let diff = firstDifference(expected.fields, info.config);
  if (diff && !diff.immutable) {
    const { name: _name, storage: _storage, retention: _retention, ...updatable } = cfg;
    await jsm.streams.update(cfg.name, updatable);
    info = await jsm.streams.info(cfg.name);
    diff = firstDifference(expected.fields, info.config);
  }
  if (diff) refuse(`stream ${cfg.name}`, diff, "JetStream cannot change it in place");
  return info;
}

/**
 * Creates the jobs stream when missing (as `expectedJobsStream` states it), updates what JetStream
 * can update in place, then reads it back. Idempotent; safe to call from several processes at once.
 * @throws INVARIANT_VIOLATION naming the field when the server's stream differs in a way that
 * cannot be updated (or silently dropped a field), or when `duplicateWindowMs > maxAgeMs`.
 */
export async function ensureJobsStream(
  jsm: JetStreamManager,
  nats: NatsConfig,
): Promise<StreamInfo> {
  if (nats.duplicateWindowMs > nats.maxAgeMs) {
    throw new IdemError(
      "INVARIANT_VIOLATION",
      `nats.duplicateWindowMs ${nats.duplicateWindowMs} must be at most nats.maxAgeMs ${nats.maxAgeMs}`,
      { details: { field: "nats.duplicateWindowMs" } },
    );
  }
  return await ensureStream(jsm, expectedJobsStream(nats));
}

/**
 * Creates the stream that captures the jobs stream's MAX_DELIVERIES and MSG_TERMINATED advisories
 * (as `expectedDeadLetterStream` states it), so a dead letter is not lost while no executor
 * listens. Idempotent.
 * @throws INVARIANT_VIOLATION when an existing stream of that name differs.
 */
export async function ensureDeadLetterStream(
  jsm: JetStreamManager,
  nats: NatsConfig,
): Promise<StreamInfo> {
  return await ensureStream(jsm, expectedDeadLetterStream(nats));
}

/**
 * Creates or updates the durable pull consumer of `agent` (as `expectedAgentConsumer` states it)
 * and reads it back, comparing the effective values. Idempotent; only the executor calls it.
 * @throws INVARIANT_VIOLATION naming the field when the server holds something else (a field it
 * cannot update, or one it silently dropped), or when `maxDeliver` does not exceed the backoff steps.
 */
export async function ensureAgentConsumer(
  jsm: JetStreamManager,
  config: Pick<Config, "queue"> & { nats: NatsConfig },
  agent: string,
): Promise<AgentConsumer> {
  const { queue, nats } = config;
  if (queue.backoffMs.length > 0 && queue.maxDeliver <= queue.backoffMs.length) {
    throw new IdemError(
      "INVARIANT_VIOLATION",
      `queue.maxDeliver ${queue.maxDeliver} must be greater than the number of backoff steps (${queue.backoffMs.length})`,
      { details: { field: "queue.maxDeliver" } },
    );
  }
  const expected = expectedAgentConsumer(config, agent);
  const { name } = expected;
  const cfg = { ...expected.config } as Partial<ConsumerConfig>;
  let info: ConsumerInfo;
  try {
    info = await jsm.consumers.info(nats.stream, name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    info = await jsm.consumers.add(nats.stream, cfg);
  }
  let diff = firstDifference(expected.fields, info.config);
  if (diff && !diff.immutable) {
    const {
      durable_name: _d,
      filter_subject: _f,
      ack_policy: _a,
      deliver_policy: _p,
      ...upd
    } = cfg;
    if (!upd.backoff) upd.backoff = [];
    await jsm.consumers.update(nats.stream, name, upd);
    info = await jsm.consumers.info(nats.stream, name);
    diff = firstDifference(expected.fields, info.config);
  }
  if (diff)
    refuse(`consumer ${name} on ${nats.stream}`, diff, "delete the consumer or fix the config");
  return {
    stream: nats.stream,
    name,
    agent,
    effectiveAckWaitMs: millis(info.config.ack_wait ?? nanos(expected.effectiveAckWaitMs)),
    info,
  };
}
