// The one statement of what idem expects JetStream to hold: provisioning creates and compares
// against it, doctor reads the server and compares against it, the publish effect checks a
// target's stream against it.
import type { Config, NatsConfig } from "@idem/schema";

/** The stream a publish target names and the subject prefix it must capture. */
export interface PublishStreamTarget {
  stream: string;
  subjectPrefix: string;
}

import {
  agentConsumerName,
  deadLetterAdvisorySubjects,
  deadLetterStreamName,
  jobSubject,
  jobsSubjects,
  nanos,
} from "./subjects.js";

/** One field of a stream or consumer config as idem expects the server to hold it. */
export interface ExpectedField {
  /** The JetStream API field name (`max_age`, `ack_wait`, ...). */
  readonly field: string;
  readonly expected: unknown;
  /** JetStream cannot change it in place: only deleting and recreating fixes it. */
  readonly immutable: boolean;
  /** What the server's answer means when the field is absent (`backoff`: `[]`). */
  readonly absentAs?: unknown;
}

/** A field whose server value differs from the expectation. */
export interface FieldDifference {
  readonly field: string;
  readonly expected: unknown;
  readonly actual: unknown;
  readonly immutable: boolean;
}

/** The stream config idem creates (plain JSON, as the JetStream API takes it) and what it compares. */
export interface ExpectedStream {
  readonly name: string;
  readonly config: {
    name: string;
    subjects: string[];
    storage: "file";
    retention: "limits";
    max_age: number;
    duplicate_window?: number;
    num_replicas: number;
  };
  /** In the order provisioning compares them: the first difference is the one it reports. */
  readonly fields: readonly ExpectedField[];
}

/** The durable consumer config idem creates for one agent and what it compares. */
export interface ExpectedConsumer {
  readonly stream: string;
  readonly name: string;
  readonly agent: string;
  readonly config: {
    durable_name: string;
    filter_subject: string;
    ack_policy: "explicit";
    deliver_policy: "all";
    ack_wait: number;
    max_deliver: number;
    max_ack_pending: number;
    backoff?: number[];
  };
  /** The effective ack wait the server applies (see `effectiveAckWaitMs`). */
  readonly effectiveAckWaitMs: number;
  /** In the order provisioning compares them. */
  readonly fields: readonly ExpectedField[];
}

/** What a publish target's stream must be: present, capturing every subject under `<prefix>.>`. */
export interface ExpectedPublishStream {
  readonly name: string;
  /** The subjects the stream must capture, as a pattern: `<subjectPrefix>.>`. */
  readonly captures: string;
  readonly subjectPrefix: string;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * Compares a server config (stream or consumer `config`, as plain JSON) field by field with an
 * expectation. Pure; an empty answer means the server holds what idem expects.
 */
export function differences(
  fields: readonly ExpectedField[],
  actual: Readonly<Record<string, unknown>>,
): FieldDifference[] {
  const out: FieldDifference[] = [];
  for (const f of fields) {
    const value = actual[f.field] ?? f.absentAs;
    if (!sameValue(f.expected, value))
      out.push({ field: f.field, expected: f.expected, actual: value, immutable: f.immutable });
  }
  return out;
}

/** The ack wait nats-server applies: with a backoff it stores `backoff[0]`. */
export function effectiveAckWaitMs(queue: Config["queue"]): number {
  return queue.backoffMs.length > 0 ? (queue.backoffMs[0] as number) : queue.ackWaitMs;
}

function streamFields(cfg: ExpectedStream["config"]): ExpectedField[] {
  const fields: ExpectedField[] = [
    { field: "storage", expected: cfg.storage, immutable: true },
    { field: "retention", expected: cfg.retention, immutable: true },
    { field: "subjects", expected: cfg.subjects, immutable: false },
    { field: "max_age", expected: cfg.max_age, immutable: false },
    // A clustered server moves a stream to more or fewer replicas in place.
    { field: "num_replicas", expected: cfg.num_replicas, immutable: false, absentAs: 1 },
  ];
  if (cfg.duplicate_window !== undefined)
    fields.push({ field: "duplicate_window", expected: cfg.duplicate_window, immutable: false });
  return fields;
}

/**
 * The jobs stream of `nats`: file storage, limits retention, `<prefix>.jobs.>`, `max_age` and
 * `duplicate_window` from the config. Pure; it does not check `duplicateWindowMs <= maxAgeMs`
 * (`ensureJobsStream` refuses that).
 */
export function expectedJobsStream(nats: NatsConfig): ExpectedStream {
  const config = {
    name: nats.stream,
    subjects: jobsSubjects(nats.subjectPrefix),
    storage: "file" as const,
    retention: "limits" as const,
    max_age: nanos(nats.maxAgeMs),
    duplicate_window: nanos(nats.duplicateWindowMs),
    num_replicas: nats.replicas,
  };
  return { name: config.name, config, fields: streamFields(config) };
}

/** The stream that keeps the jobs stream's dead-letter advisories. Pure. */
export function expectedDeadLetterStream(nats: NatsConfig): ExpectedStream {
  const config = {
    name: deadLetterStreamName(nats.stream),
    subjects: deadLetterAdvisorySubjects(nats.stream),
    storage: "file" as const,
    retention: "limits" as const,
    max_age: nanos(nats.maxAgeMs),
    num_replicas: nats.replicas,
  };
  return { name: config.name, config, fields: streamFields(config) };
}

/**
 * The durable pull consumer of `agent` from `config.queue`: explicit acks, deliver all, ack_wait,
 * max_deliver, backoff, max_ack_pending. `ack_wait` is compared at its effective value. Pure; it
 * does not check `maxDeliver > backoff steps` (`ensureAgentConsumer` refuses that).
 */
export function expectedAgentConsumer(
  config: Pick<Config, "queue"> & { nats: NatsConfig },
  agent: string,
): ExpectedConsumer {
  const { queue, nats } = config;
  const name = agentConsumerName(agent);
  const effective = effectiveAckWaitMs(queue);
  const cfg: ExpectedConsumer["config"] = {
    durable_name: name,
    filter_subject: jobSubject(nats.subjectPrefix, agent),
    ack_policy: "explicit",
    deliver_policy: "all",
    ack_wait: nanos(queue.ackWaitMs),
    max_deliver: queue.maxDeliver,
    max_ack_pending: queue.maxAckPending,
  };
  if (queue.backoffMs.length > 0) cfg.backoff = queue.backoffMs.map(nanos);
  return {
    stream: nats.stream,
    name,
    agent,
    config: cfg,
    effectiveAckWaitMs: effective,
    fields: [
      { field: "filter_subject", expected: cfg.filter_subject, immutable: true },
      { field: "ack_policy", expected: cfg.ack_policy, immutable: true },
      { field: "deliver_policy", expected: cfg.deliver_policy, immutable: true },
      { field: "ack_wait", expected: nanos(effective), immutable: false },
      { field: "max_deliver", expected: cfg.max_deliver, immutable: false },
      { field: "backoff", expected: cfg.backoff ?? [], immutable: false, absentAs: [] },
      { field: "max_ack_pending", expected: cfg.max_ack_pending, immutable: false },
    ],
  };
}

/** What the stream of a publish target must be (it is the user's stream; idem never creates it). */
export function expectedPublishStream(target: PublishStreamTarget): ExpectedPublishStream {
  return {
    name: target.stream,
    captures: `${target.subjectPrefix}.>`,
    subjectPrefix: target.subjectPrefix,
  };
}

/** True when the stream subject `pattern` captures every subject under `prefix.>`. Pure. */
export function patternCovers(pattern: string, prefix: string): boolean {
  const p = pattern.split(".");
  const s = [...prefix.split("."), ">"];
  for (let i = 0; i < s.length; i++) {
    const a = p[i];
    const b = s[i] as string;
    if (a === undefined) return false;
    if (a === ">") return true;
    if (b === ">") return false;
    if (a !== "*" && a !== b) return false;
  }
  return p.length === s.length;
}

/** True when a stream with `subjects` captures what `expected` needs. Pure. */
export function streamCaptures(
  expected: ExpectedPublishStream,
  subjects: readonly string[],
): boolean {
  return subjects.some((s) => patternCovers(s, expected.subjectPrefix));
}
