import type { Config, NatsConfig } from "@idem/schema";
import { IdemError } from "@idem/schema";
import {
  AckPolicy,
  type ConsumerConfig,
  type ConsumerInfo,
  DeliverPolicy,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
  type StreamInfo,
} from "@nats-io/jetstream";
import {
  agentConsumerName,
  deadLetterAdvisorySubjects,
  deadLetterStreamName,
  jobSubject,
  jobsSubjects,
  millis,
  nanos,
} from "./subjects.js";

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

interface FieldCheck {
  field: string;
  expected: unknown;
  actual: unknown;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function firstDifference(checks: FieldCheck[]): FieldCheck | undefined {
  return checks.find((c) => !sameValue(c.expected, c.actual));
}

function refuse(what: string, diff: FieldCheck, hint: string): never {
  throw new IdemError(
    "INVARIANT_VIOLATION",
    `${what}: ${diff.field} is ${JSON.stringify(diff.actual)} on the server, expected ${JSON.stringify(diff.expected)}; ${hint}`,
    { details: { field: diff.field, expected: diff.expected, actual: diff.actual } },
  );
}

/** A JetStream "stream not found" or "consumer not found" answer. */
export function isNotFound(e: unknown): boolean {
  const err = e as { code?: unknown; api_error?: { err_code?: number }; message?: string };
  const apiCode = err?.api_error?.err_code;
  return (
    apiCode === 10059 || // stream not found
    apiCode === 10014 || // consumer not found
    /not found/i.test(String(err?.message ?? ""))
  );
}

async function ensureStream(
  jsm: JetStreamManager,
  cfg: Partial<StreamConfig> & { name: string },
  checks: (info: StreamInfo) => FieldCheck[],
  immutable: readonly string[],
): Promise<StreamInfo> {
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
  let diff = firstDifference(checks(info));
  if (diff && !immutable.includes(diff.field)) {
    const { name: _name, storage: _storage, retention: _retention, ...updatable } = cfg;
    await jsm.streams.update(cfg.name, updatable);
    info = await jsm.streams.info(cfg.name);
    diff = firstDifference(checks(info));
  }
  if (diff) refuse(`stream ${cfg.name}`, diff, "JetStream cannot change it in place");
  return info;
}

/**
 * Creates the jobs stream when missing (file storage, limits retention, `max_age` and
 * `duplicate_window` from the config), updates what JetStream can update in place, then reads it
 * back. Idempotent; safe to call from several processes at once.
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
  const subjects = jobsSubjects(nats.subjectPrefix);
  const cfg = {
    name: nats.stream,
    subjects,
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: nanos(nats.maxAgeMs),
    duplicate_window: nanos(nats.duplicateWindowMs),
  };
  return await ensureStream(
    jsm,
    cfg,
    (info) => [
      { field: "storage", expected: cfg.storage, actual: info.config.storage },
      { field: "retention", expected: cfg.retention, actual: info.config.retention },
      { field: "subjects", expected: subjects, actual: info.config.subjects },
      { field: "max_age", expected: cfg.max_age, actual: info.config.max_age },
      {
        field: "duplicate_window",
        expected: cfg.duplicate_window,
        actual: info.config.duplicate_window,
      },
    ],
    ["storage", "retention"],
  );
}

/**
 * Creates the stream that captures the jobs stream's MAX_DELIVERIES and MSG_TERMINATED advisories,
 * so a dead letter is not lost while no executor listens. Idempotent.
 * @throws INVARIANT_VIOLATION when an existing stream of that name differs.
 */
export async function ensureDeadLetterStream(
  jsm: JetStreamManager,
  nats: NatsConfig,
): Promise<StreamInfo> {
  const subjects = deadLetterAdvisorySubjects(nats.stream);
  const cfg = {
    name: deadLetterStreamName(nats.stream),
    subjects,
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: nanos(nats.maxAgeMs),
  };
  return await ensureStream(
    jsm,
    cfg,
    (info) => [
      { field: "storage", expected: cfg.storage, actual: info.config.storage },
      { field: "retention", expected: cfg.retention, actual: info.config.retention },
      { field: "subjects", expected: subjects, actual: info.config.subjects },
      { field: "max_age", expected: cfg.max_age, actual: info.config.max_age },
    ],
    ["storage", "retention"],
  );
}

/** The ack wait nats-server applies: with a backoff it stores `backoff[0]`. */
export function effectiveAckWaitMs(queue: Config["queue"]): number {
  return queue.backoffMs.length > 0 ? (queue.backoffMs[0] as number) : queue.ackWaitMs;
}

/**
 * Creates or updates the durable pull consumer of `agent` from `config.queue` (explicit acks,
 * ack_wait, max_deliver, backoff, max_ack_pending) and reads it back, comparing the effective
 * values. Idempotent; only the executor calls it.
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
  const name = agentConsumerName(agent);
  const effective = effectiveAckWaitMs(queue);
  const cfg: Partial<ConsumerConfig> = {
    durable_name: name,
    filter_subject: jobSubject(nats.subjectPrefix, agent),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(queue.ackWaitMs),
    max_deliver: queue.maxDeliver,
    max_ack_pending: queue.maxAckPending,
  };
  if (queue.backoffMs.length > 0) cfg.backoff = queue.backoffMs.map(nanos);
  const checks = (info: ConsumerInfo): FieldCheck[] => [
    { field: "filter_subject", expected: cfg.filter_subject, actual: info.config.filter_subject },
    { field: "ack_policy", expected: cfg.ack_policy, actual: info.config.ack_policy },
    { field: "deliver_policy", expected: cfg.deliver_policy, actual: info.config.deliver_policy },
    { field: "ack_wait", expected: nanos(effective), actual: info.config.ack_wait },
    { field: "max_deliver", expected: cfg.max_deliver, actual: info.config.max_deliver },
    {
      field: "backoff",
      expected: cfg.backoff ?? [],
      actual: info.config.backoff ?? [],
    },
    {
      field: "max_ack_pending",
      expected: cfg.max_ack_pending,
      actual: info.config.max_ack_pending,
    },
  ];
  let info: ConsumerInfo;
  try {
    info = await jsm.consumers.info(nats.stream, name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    info = await jsm.consumers.add(nats.stream, cfg);
  }
  let diff = firstDifference(checks(info));
  if (diff && !["filter_subject", "ack_policy", "deliver_policy"].includes(diff.field)) {
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
    diff = firstDifference(checks(info));
  }
  if (diff)
    refuse(`consumer ${name} on ${nats.stream}`, diff, "delete the consumer or fix the config");
  return {
    stream: nats.stream,
    name,
    agent,
    effectiveAckWaitMs: millis(info.config.ack_wait ?? nanos(effective)),
    info,
  };
}
