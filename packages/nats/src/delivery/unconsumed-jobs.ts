import type { Job, NatsConfig, ValidationIssue } from "@idem/schema";
import { validateJob } from "@idem/schema";
import type { JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { loadJetStream } from "../nats-client.js";
import { isNotFound } from "../provisioning.js";
import { agentConsumerName, jobSubject } from "../subjects.js";

/** Bound on each JetStream API request of a sweep. */
const REQUEST_TIMEOUT_MS = 5_000;
/** At most this many messages of one subject are read per sweep; the rest waits for the next. */
const MAX_PER_SUBJECT = 1_000;
/**
 * How long a sweep trusts a consumer it found (a durable consumer is rarely deleted), so the
 * subjects of agents that other executors run cost no request per sweep.
 */
const CONSUMER_SEEN_MS = 60_000;

/** One message of the jobs stream found under the subject of an agent no executor consumes. */
export interface UnconsumedJobMessage {
  /** `<subjectPrefix>.jobs.<agent>`. */
  readonly subject: string;
  /** The agent its subject names. */
  readonly agent: string;
  /** Its sequence in the jobs stream. */
  readonly seq: number;
  /** The job, when the message is a valid job for `agent` (else undefined, see `issues`). */
  readonly job: Job | undefined;
  /** Why it is not a valid job for `agent` (undefined for a valid job or a job of another agent). */
  readonly issues: ValidationIssue[] | undefined;
}

/** What {@link UnconsumedJobs.sweep} asks its caller. */
export interface SweepUnconsumedOptions {
  /**
   * True when the jobs of `agent` are left alone (an agent the caller knows some executor runs).
   * Asked once per sweep for each agent with messages on the stream, before its consumer is read.
   */
  skip(agent: string): boolean | Promise<boolean>;
  /**
   * Settles one message of an agent without a consumer: true when it is handled for good (it is
   * then purged), false to keep it, and every later message of its subject, for the next sweep.
   * A throw ends the sweep (what was handled before it on that subject is still purged).
   */
  handle(message: UnconsumedJobMessage): Promise<boolean>;
}

/** The JetStream side of the executor's unknown-agent sweep, on the executor's connection. */
export interface UnconsumedJobs {
  /**
   * True when the jobs stream has the durable consumer of `agent` (an executor that runs it
   * created it), false when it has none.
   * @throws the client's error when the consumer cannot be read (timeout, no JetStream).
   */
  hasConsumer(agent: string): Promise<boolean>;
  /**
   * Finds the jobs stream's messages under `<subjectPrefix>.jobs.<agent>` for every agent that
   * `skip` does not claim and that has no consumer, hands each to `handle` in stream order, and
   * purges that subject up to the last message handled (bounded by its sequence, so a message
   * published meanwhile is never lost). One stream-info request when there is nothing to do (a
   * consumer found is trusted for a minute, not read again each sweep);
   * repeatable (a message already purged is not found again; one `handle` kept is found again).
   * Returns how many messages `handle` settled.
   * @throws the client's error for a failed request; purges already made stay made.
   */
  sweep(options: SweepUnconsumedOptions): Promise<number>;
}

/**
 * Opens {@link UnconsumedJobs} on `nc` (left open) for the jobs stream of `nats`. The JetStream
 * manager is made on first use; a failure to make it is thrown by that call and retried by the next.
 */
export function openUnconsumedJobs(nc: NatsConnection, nats: NatsConfig): UnconsumedJobs {
  let manager: Promise<JetStreamManager> | undefined;
  const jsm = () => {
    manager ??= loadJetStream()
      .then(({ jetstreamManager }) => jetstreamManager(nc, { timeout: REQUEST_TIMEOUT_MS }))
      .catch((e: unknown) => {
        manager = undefined;
        throw e;
      });
    return manager;
  };
  const prefix = `${nats.subjectPrefix}.jobs.`;
  /** When a sweep last found each agent's consumer (`Date.now()`). */
  const consumerSeen = new Map<string, number>();

  async function consumedAgent(agent: string): Promise<boolean> {
    const seen = consumerSeen.get(agent);
    if (seen !== undefined && Date.now() - seen < CONSUMER_SEEN_MS) return true;
    const found = await hasConsumer(agent);
    if (found) consumerSeen.set(agent, Date.now());
    else consumerSeen.delete(agent);
    return found;
  }

  async function hasConsumer(agent: string): Promise<boolean> {
    try {
      await (await jsm()).consumers.info(nats.stream, agentConsumerName(agent));
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /** The message of `subject` at or after `seq`, or null when there is none. */
  async function next(m: JetStreamManager, subject: string, seq: number) {
    // STREAM.MSG.GET takes next_by_subj (nats-server >= 2.9); the client's type only lists seq.
    const query = { seq, next_by_subj: subject } as unknown as { seq: number };
    return await m.streams.getMessage(nats.stream, query);
  }

  /** Reads, settles and purges the messages of one subject; returns how many were settled. */
  async function sweepSubject(
    m: JetStreamManager,
    agent: string,
    count: number,
    handle: SweepUnconsumedOptions["handle"],
  ): Promise<number> {
    const subject = jobSubject(nats.subjectPrefix, agent);
    let seq = 1;
    let settled = 0;
    let purgeBelow = 0;
    try {
      for (let read = 0; read < Math.min(count, MAX_PER_SUBJECT); read++) {
        const msg = await next(m, subject, seq);
        if (!msg) break;
        let parsed: unknown;
        try {
          parsed = msg.json();
        } catch {
          parsed = undefined;
        }
        const v = validateJob(parsed);
        const job = v.ok && v.value.agent === agent ? v.value : undefined;
        const issues = v.ok ? undefined : v.issues;
        if (!(await handle({ subject, agent, seq: msg.seq, job, issues }))) break;
        settled += 1;
        purgeBelow = msg.seq + 1;
        seq = msg.seq + 1;
      }
    } finally {
      if (purgeBelow > 0) await m.streams.purge(nats.stream, { filter: subject, seq: purgeBelow });
    }
    return settled;
  }

  return {
    hasConsumer,
    async sweep({ skip, handle }) {
      const m = await jsm();
      const info = await m.streams.info(nats.stream, { subjects_filter: `${prefix}>` });
      const subjects = info.state.subjects ?? {};
      let settled = 0;
      for (const [subject, count] of Object.entries(subjects)) {
        if (!subject.startsWith(prefix) || count <= 0) continue;
        const agent = subject.slice(prefix.length);
        if (agent.includes(".") || (await skip(agent)) || (await consumedAgent(agent))) continue;
        settled += await sweepSubject(m, agent, count, handle);
      }
      return settled;
    },
  };
}
