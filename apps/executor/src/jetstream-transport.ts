import { type Delivery, endLeasesIfDead, RECOVERY_GRACE_MS } from "@idem/core";
import { JOURNAL_EVENTS, type JobClaimResult, type JobLease, type JobRecord } from "@idem/journal";
import {
  type DeadLetterAdvisory,
  type JetStreamJobMessage,
  type JetStreamJobs,
  type JobPublisher,
  type NatsConnection,
  openJetStreamJobs,
} from "@idem/nats";
import { normalizeTraceparent } from "@idem/runtime";
import {
  createBackoff,
  describeError,
  FAILURE_CLASSES,
  type FailureClass,
  isIdemError,
  type Job,
  retryMsgId,
  sleep,
} from "@idem/schema";
import { type DeadDeliverySweep, startDeadDeliverySweep } from "./dead-deliveries.js";
import type { ExecutorTransport, TransportContext } from "./transport.js";

/** A JetStream transport, with the publisher it opened (after `start()`). */
export interface JetStreamTransport extends ExecutorTransport {
  /** The jobs stream's publisher, once started (the outbox republish, `idem enqueue`). */
  readonly publisher: JobPublisher | undefined;
}

/**
 * One JetStream delivery: the message's settlement plus the job's in-progress claim in the
 * journal, which lives as long as the delivery does (extended by the heartbeats once half of it
 * has passed; it expires only when this executor is gone).
 */
class JetStreamDelivery implements Delivery {
  readonly job: Job;
  readonly deliveries: number;
  /** The `traceparent` header the job was published with, when it is a valid one. */
  readonly traceparent: string | undefined;
  #claimUntil = 0;

  constructor(
    private readonly message: JetStreamJobMessage,
    private readonly context: TransportContext,
    /** How often the message is told it is being worked on (a third of its ack wait). */
    private readonly heartbeatMs: number,
  ) {
    this.job = message.job;
    this.deliveries = message.deliveries;
    this.traceparent = normalizeTraceparent(message.traceparent);
  }

  /**
   * The job's in-progress claim. While another delivery holds it (an executor that died running
   * the job holds it until its lease ends, the agent's timeout at most), this delivery waits in
   * place: JetStream counts every delivery against `maxDeliver`, so a nak and a redelivery would
   * spend the job's budget on waiting (issue 36). The message is kept in progress (`working()`
   * each heartbeat) and the job's row read each heartbeat; once the holder's lease has ended (or
   * its output is recorded) the claim is asked again, and the delivery that waited is the one that
   * runs the job. A holder provably dead on this host (`endLeasesIfDead`: an executor SIGKILLed
   * while its agent ran) does not make it wait: its lease is ended at once and the claim asked
   * again, taken over as an expired one is. "held" is answered only when the executor stops
   * meanwhile.
   */
  async claim(): Promise<JobClaimResult> {
    const { job, context } = this;
    let told = false;
    for (;;) {
      // The claim notes the delivery's stream sequence (a job published by another client has no
      // outbox row before it), so the outbox republish finds the job in the stream.
      const c = await this.#claimThroughOutage();
      if (c.status === "acquired") {
        this.#claimUntil = c.lease.until;
        // The run starts with a whole ack wait before its first heartbeat, however long the claim
        // took (a takeover, a busy journal): a slow start must not have the job delivered again.
        this.message.working();
      }
      if (c.status !== "held" || context.stopSignal.aborted) return c;
      // The ack wait runs from the delivery: the time spent on the held claim is not the run's.
      this.message.working();
      if ((await this.#heldBy()) !== "live") continue;
      if (!told) {
        told = true;
        context.log.info(
          { jobId: job.jobId, delivery: this.deliveries, heldUntil: c.until },
          "another delivery of this job holds it: waiting in place until its claim ends (this delivery keeps the message; no delivery is spent)",
        );
      }
      await this.#waitWhileHeld();
    }
  }

  /**
   * The journal's claim of the job. While the journal is UNAVAILABLE (a PostgreSQL server gone or
   * restarting) the delivery waits in place, the message kept in progress, and asks again with a
   * backoff (250 ms up to 5 s): a failed handler would leave the message to lapse, and with a
   * backoff set JetStream's ack wait is its first step, so every delivery in flight would be
   * spent in a few seconds of outage and the jobs dead-lettered. Once the journal answers, the
   * claim waits RECOVERY_GRACE_MS more: an output another executor holds in memory, retrying its
   * record, is recorded first, and its job found recorded here rather than run again.
   */
  async #claimThroughOutage(): Promise<JobClaimResult> {
    const { job, context } = this;
    const outage = createBackoff({ initialMs: 250, maxMs: 5_000 });
    let down = false;
    for (;;) {
      try {
        if (down) {
          await context.journal.jobs.count({ since: context.clock.now() });
          context.log.info({ jobId: job.jobId }, "the journal is back: claiming shortly");
          await this.#keep(RECOVERY_GRACE_MS);
          down = false;
        }
        return await context.journal.jobs.claim(job, {
          owner: context.owner,
          leaseMs: context.timeoutOf(job.agent),
          streamSeq: this.message.streamSeq,
          ...(this.traceparent === undefined ? {} : { traceparent: this.traceparent }),
        });
      } catch (e) {
        if (!isIdemError(e, "UNAVAILABLE") || context.stopSignal.aborted) throw e;
        const delay = outage.next();
        if (!down) {
          context.log.warn(
            { jobId: job.jobId, err: describeError(e), retryInMs: delay },
            "the journal is unavailable: keeping this delivery and claiming again when it is back",
          );
        }
        down = true;
        await this.#keep(delay);
      }
    }
  }

  /** Waits `ms` (less when the executor stops) with the message kept in progress. */
  async #keep(ms: number): Promise<void> {
    const until = performance.now() + ms;
    while (!this.context.stopSignal.aborted && performance.now() < until) {
      this.message.working();
      await sleep(Math.min(this.heartbeatMs, until - performance.now()), this.context.stopSignal);
    }
  }

  /** Keeps the message in progress while the job's row is held under a live lease by another. */
  async #waitWhileHeld(): Promise<void> {
    const { context } = this;
    while (!context.stopSignal.aborted) {
      this.message.working();
      await sleep(this.heartbeatMs, context.stopSignal);
      const held = await this.#heldBy();
      if (held !== "live" && held !== "unknown") return;
    }
  }

  /**
   * Who holds the job's row now: `"live"` (another process, under a lease not ended, not provably
   * dead), `"free"` (no live lease), `"dead"` (its holder is provably dead on this host: its leases
   * were ended here, the claim can be asked again) or `"unknown"` (a journal that cannot answer
   * now, UNAVAILABLE: waited out with the message kept).
   */
  async #heldBy(): Promise<"live" | "free" | "dead" | "unknown"> {
    const { context, job } = this;
    try {
      const row = await context.journal.jobs.get(job.jobId);
      const held = row?.state === "running" && (row.leaseUntil ?? 0) > context.clock.now();
      if (!held) return "free";
      const dead = await endLeasesIfDead(context.journal.jobs, row.leaseOwner, {
        self: context.owner,
      });
      if (!dead) return "live";
      context.log.warn(
        { event: "executor.dead-holders", jobId: job.jobId, owners: [row.leaseOwner] },
        "the holder of this job's claim is dead on this host: taking the job over now",
      );
      return "dead";
    } catch (e) {
      context.log.warn(
        { jobId: job.jobId, err: describeError(e) },
        "could not read the job's claim; waiting in place",
      );
      return "unknown";
    }
  }

  async heartbeat(lease: JobLease | undefined): Promise<void> {
    this.message.working();
    const { context } = this;
    const leaseMs = context.timeoutOf(this.job.agent);
    if (lease && context.clock.now() > this.#claimUntil - leaseMs / 2) {
      this.#claimUntil = (await context.journal.jobs.extendLease(lease, leaseMs)).until;
    }
  }

  async ack(): Promise<void> {
    try {
      await this.message.ack();
    } catch (e) {
      // Harmless: the redelivery finds the output recorded and is acked then.
      this.context.log.warn({ jobId: this.job.jobId, err: describeError(e) }, "ack not confirmed");
    }
  }

  async later(delayMs: number): Promise<void> {
    this.message.nak(delayMs);
  }

  async giveUp(): Promise<void> {
    this.message.term();
  }
}

/**
 * JetStream: provisions the jobs stream, the dead-letter stream and one consumer per agent,
 * republishes outbox jobs missing from the stream, then consumes (at most `queue.maxAckPending` in
 * flight per consumer) and records the dead letters JetStream reports. `nc` stays open on stop.
 */
export function createJetStreamTransport(
  context: TransportContext,
  nc: NatsConnection,
): JetStreamTransport {
  const { config, journal, log, clock } = context;
  let jobs: JetStreamJobs | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let deadDeliveries: DeadDeliverySweep | undefined;
  /** The outbox sweep in progress, if any: sweeps never overlap. */
  let sweeping: Promise<void> | undefined;

  async function onDeadLetterAdvisory(a: DeadLetterAdvisory): Promise<void> {
    if (!a.job) {
      log.warn(
        { advisory: a.kind, streamSeq: a.streamSeq },
        "dead letter for a message that is gone or not a job",
      );
      return;
    }
    const jobId = a.job.jobId;
    if (await journal.outputs.has(jobId)) return;
    const row = await journal.jobs.get(jobId);
    if (row?.state === "dead") return;
    if (row && (await supersededMessage(a, row))) {
      log.info(
        { jobId, advisory: a.kind, streamSeq: a.streamSeq, msgId: a.msgId },
        "dead-letter advisory for an earlier message of a retried job: ignored",
      );
      return;
    }
    if (row?.state === "running" && row.leaseUntil !== null && row.leaseUntil > clock.now()) return;
    const failed = await journal.events.list({ jobId, type: JOURNAL_EVENTS.JOB_FAILED });
    const lastClass = failed.at(-1)?.data?.class;
    const cls: FailureClass =
      typeof lastClass === "string" && (FAILURE_CLASSES as readonly string[]).includes(lastClass)
        ? (lastClass as FailureClass)
        : "infrastructure";
    const error =
      row?.lastError ??
      `${a.kind === "terminated" ? "terminated" : "max deliveries reached"} after ${a.deliveries} deliveries without a recorded failure (ack wait expired: crash or stall)`;
    await journal.deadLetters.add(jobId, {
      class: cls,
      error,
      deliveries: a.deliveries,
      agent: a.job.agent,
    });
    log.error(
      { jobId, advisory: a.kind, class: cls, err: error },
      "job dead-lettered by JetStream",
    );
    await context.deadLettered(jobId);
  }

  /**
   * True when the advisory is about a message that is no longer the job's current one: `idem dlq
   * retry` republished the job since (under Nats-Msg-Id `<jobId>#retry-<n>`), so the advisory of an
   * earlier message, arriving late, must not dead-letter the retried job. The message's retry
   * generation comes from its msg id (`<jobId>` is 0) and is compared with the job's retries (the
   * latest `job.retry` event), which are counted before the republish; a message with another msg
   * id (published by another client) is current when it is the one the job's row last noted.
   */
  async function supersededMessage(a: DeadLetterAdvisory, row: JobRecord): Promise<boolean> {
    const current = await retriesOf(row.jobId);
    if (current === 0) return false;
    const generation = retryGeneration(row.jobId, a.msgId);
    if (generation !== undefined) return generation < current;
    return row.streamSeq !== null && a.streamSeq !== row.streamSeq;
  }

  /** How many times `idem dlq retry` queued the job again: its latest `job.retry` event's count. */
  async function retriesOf(jobId: string): Promise<number> {
    const retries = await journal.events.list({ jobId, type: JOURNAL_EVENTS.JOB_RETRY });
    if (retries.length === 0) return 0;
    const last = retries.at(-1)?.data?.retries;
    return typeof last === "number" ? last : retries.length;
  }

  /**
   * Republishes outbox jobs younger than max_age that are missing from the stream, under the msg
   * id they were (or would have been) published with: the job ID, or `<jobId>#retry-<n>` for a job
   * `idem dlq retry` queued again whose publish failed (its row has no stream message then).
   */
  async function republishOutbox(
    opened: JetStreamJobs,
    maxAgeMs: number,
    onlyUnpublished = false,
  ): Promise<void> {
    const pending = await journal.jobs.pending({ since: clock.now() - maxAgeMs });
    let republished = 0;
    for (const row of pending) {
      if (row.streamSeq !== null && onlyUnpublished) continue;
      if (row.streamSeq !== null && (await opened.holds(row.streamSeq, row.jobId))) continue;
      const retries = await retriesOf(row.jobId);
      const pub = await opened.publisher.publish(
        { jobId: row.jobId, agent: row.agent, input: row.input as Job["input"] },
        {
          traceparent: row.traceparent,
          ...(retries > 0 && { msgId: retryMsgId(row.jobId, retries) }),
        },
      );
      await journal.jobs.setStreamSeq(row.jobId, pub.seq);
      republished += 1;
    }
    if (republished > 0)
      log.info({ republished }, "republished outbox jobs missing from the stream");
  }

  /**
   * Runs one outbox sweep unless one is running; a failed sweep is logged (the next one tries
   * again). Besides the sweep at start, a sweep after each reconnect checks every pending job
   * against the stream (a publish lost while NATS was away), and one every `OUTBOX_SWEEP_MS`
   * publishes the jobs whose publish never got a PubAck (an `idem enqueue` or `idem dlq retry`
   * that failed): their rows name no stream message, so that sweep asks NATS nothing else.
   */
  function sweepOutbox(opened: JetStreamJobs, maxAgeMs: number, onlyUnpublished: boolean): void {
    if (sweeping !== undefined) return;
    sweeping = republishOutbox(opened, maxAgeMs, onlyUnpublished)
      .catch((e) => log.warn({ err: describeError(e) }, "outbox republish failed; will retry"))
      .finally(() => {
        sweeping = undefined;
      });
  }

  return {
    get publisher() {
      return jobs?.publisher;
    },
    async start() {
      const nats = config.nats;
      if (!nats) return;
      const opened = await openJetStreamJobs({
        nc,
        config: { nats, queue: config.queue },
        agents: context.agents,
        clock,
      });
      jobs = opened;
      await republishOutbox(opened, nats.maxAgeMs);
      await opened.consume({
        deliver: (message, heartbeatMs) =>
          context.deliver(new JetStreamDelivery(message, context, heartbeatMs), heartbeatMs),
        onInvalid: ({ subject, seq, issues }) =>
          log.error({ subject, seq, issues }, "not a valid job for this consumer: terminated"),
        onError: (e, consumer) => log.warn({ err: describeError(e), consumer }, "consumer loop"),
        onDeadLetter: onDeadLetterAdvisory,
        onDeadLetterError: (e) => log.warn({ err: describeError(e) }, "dead-letter monitor"),
        onStatus: (status) => {
          log.warn({ nats: status }, "NATS connection");
          if (status === "reconnect") sweepOutbox(opened, nats.maxAgeMs, false);
        },
      });
      sweepTimer = setInterval(() => sweepOutbox(opened, nats.maxAgeMs, true), OUTBOX_SWEEP_MS);
      sweepTimer.unref();
      deadDeliveries = startDeadDeliverySweep(context, opened);
    },
    async stop() {
      clearInterval(sweepTimer);
      await deadDeliveries?.stop();
      await sweeping;
      await jobs?.stop();
    },
  };
}

/** How often a running executor publishes the outbox jobs whose publish never got a PubAck. */
const OUTBOX_SWEEP_MS = 30_000;

/** The retry generation of a job's message from its msg id: `<jobId>` 0, `<jobId>#retry-<n>` n. */
function retryGeneration(jobId: string, msgId: string | undefined): number | undefined {
  if (msgId === jobId) return 0;
  const prefix = `${jobId}#retry-`;
  if (!msgId?.startsWith(prefix)) return undefined;
  const n = Number(msgId.slice(prefix.length));
  return Number.isInteger(n) && n > 0 ? n : undefined;
}
