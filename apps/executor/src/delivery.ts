import {
  type CheckedOutput,
  checkOutput,
  describeIssues,
  isCheckedOutput,
  type RecordOutcome,
  recordOutput,
} from "@idem/core";
import {
  JOURNAL_EVENTS,
  type JobClaimResult,
  type JobLease,
  type JournalStore,
} from "@idem/journal";
import type { Logger, TraceSpan, Tracing } from "@idem/runtime";
import {
  type Clock,
  type Config,
  classifyError,
  describeError,
  FAULT_POINTS,
  type FaultHook,
  IdemError,
  isRetryableClass,
  type Job,
  scheduledDelay,
} from "@idem/schema";
import { type AgentRunner, runWithTimeout } from "./agent-runner.js";
import { checkDeadLetterRate } from "./dead-letter-alert.js";
import type { ExecutorMetrics } from "./executor-metrics.js";

/** One delivery of one job, whatever the transport. */
export interface Delivery {
  readonly job: Job;
  /** Deliveries of this job on its transport, this one included. */
  readonly deliveries: number;
  /** The W3C trace context the job travels with (a NATS header, the job row), if any. */
  readonly traceparent?: string | undefined;
  claim(): Promise<JobClaimResult>;
  heartbeat(lease: JobLease | undefined): Promise<void>;
  /** The output is recorded (or was already): settle the delivery for good. */
  ack(): Promise<void>;
  /** Give the delivery back to be redelivered after `delayMs`. */
  later(delayMs: number): Promise<void>;
  /** Never deliver this message again (dead-lettered). */
  giveUp(): Promise<void>;
}

/** What the delivery logic works with; built once per executor. */
export interface DeliveryHandlerOptions {
  config: Config;
  journal: JournalStore;
  runner: AgentRunner;
  log: Logger;
  metrics: ExecutorMetrics;
  fault: FaultHook;
  clock: Clock;
  owner: string;
  transport: "jetstream" | "embedded";
  /** The agent's timeout (`agents.<name>.timeoutMs`, else the executor's default). */
  timeoutOf(agent: string): number;
  /**
   * True when the journal has failed for good; the first call stops the executor taking
   * deliveries and aborts `fatalSignal`.
   */
  journalFailed(): boolean;
  /**
   * Aborted when the journal fails for good, or when a stopping executor abandons what runs (its
   * stop grace is over): agents still running are stopped, not waited for.
   */
  fatalSignal: AbortSignal;
  /**
   * True once the executor abandons its deliveries (see `Executor.stop`): a run stopped then is
   * given back (`jobs.release`: due at once, the delivery uncounted), neither failed nor
   * dead-lettered, and reported to `onAbandoned`.
   */
  abandoning?(): boolean;
  /** Told of each job given back by an abandoning executor. */
  onAbandoned?(jobId: string): void;
  /** Spans of each delivery, agent run and record (continuing the job's trace); off by default. */
  tracing: Tracing;
}

/** The executor's decision for each delivery: record before ack (invariants 3 and 4 of docs/concepts.md). */
export interface DeliveryHandler {
  /**
   * Works on one delivery and settles it: a job whose output is recorded is acked without running
   * the agent (with a `redelivery.skipped` event); one held by another delivery, or in progress in
   * this process, is given back for later; otherwise the job's in-progress claim is taken, the
   * agent runs once with heartbeats every `heartbeatMs`, its output is validated and recorded
   * (retried for as long as the journal is briefly unavailable) and only then acked. A failed run
   * is given back after `queue.backoffMs`, and dead-lettered at `queue.maxDeliver`. When the
   * journal has failed for good the delivery is left unsettled for a healthy executor.
   * @throws what the journal throws when it cannot claim or note the skip; the caller logs it.
   */
  handle(d: Delivery, heartbeatMs: number): Promise<void>;
  /** True while this process runs (or records) the job: a second delivery must not run it. */
  isWorking(jobId: string): boolean;
  /** The jobs this process runs (or records) right now. */
  inProgress(): string[];
  /** Counts a dead letter and raises the dead-letter alert when due. Never throws. */
  deadLettered(jobId: string): Promise<void>;
}

/** The longest wait between two attempts of a record the journal could not take. */
export const RECORD_RETRY_MAX_MS = 1_000;

/**
 * How long claims wait once the journal is back after an outage: two record retries at most. Leases
 * lapsed during the outage, and an output still held in memory by an executor retrying its record
 * is given time to be recorded first, so the job it ran is found recorded, not run again.
 */
export const RECOVERY_GRACE_MS = 2 * RECORD_RETRY_MAX_MS + 500;

/** Fills in `jobId` and `agent` per the agent command protocol; present ones must match the job. */
function completeOutput(raw: unknown, job: Job): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const o = raw as Record<string, unknown>;
  const issues = [];
  if (o.jobId !== undefined && o.jobId !== job.jobId)
    issues.push({ path: "jobId", message: `is "${String(o.jobId)}", the job is "${job.jobId}"` });
  if (o.agent !== undefined && o.agent !== job.agent)
    issues.push({
      path: "agent",
      message: `is "${String(o.agent)}", the job's agent is "${job.agent}"`,
    });
  if (issues.length > 0) {
    throw new IdemError(
      "INVALID_INPUT",
      `the agent's output does not match its job: ${issues.map((i) => `${i.path} ${i.message}`).join("; ")}`,
      {
        details: { issues },
      },
    );
  }
  return { ...o, jobId: job.jobId, agent: job.agent };
}

/** Creates the delivery logic shared by every transport. */
export function createDeliveryHandler(options: DeliveryHandlerOptions): DeliveryHandler {
  const { config, journal, runner, log, metrics, fault, clock, owner, transport } = options;
  const { timeoutOf, journalFailed, fatalSignal, tracing } = options;
  const queue = config.queue;
  /** Job IDs this executor is working on (invariant 3 within one process). */
  const working = new Set<string>();

  async function deadLettered(jobId: string) {
    metrics.deadLetters.inc();
    await checkDeadLetterRate({ journal, config, clock, log, jobId });
  }

  /**
   * Records the checked output through core's `recordOutput`, retrying for as long as the journal
   * refuses it (docs/concepts.md, invariant 4).
   */
  async function recordDurably(
    output: CheckedOutput,
    job: Job,
    log: Logger,
    traceparent: string | undefined,
  ): Promise<RecordOutcome> {
    return recordOutput({
      journal,
      config,
      output,
      source: "executor",
      actor: owner,
      // The claimed job is the journal's row (its agent is part of the input's hash).
      jobAgent: job.agent,
      traceparent,
      metrics,
      retry: {
        maxMs: RECORD_RETRY_MAX_MS,
        // Only a failure worth another attempt (a locked or full SQLite file, a PostgreSQL server
        // gone or restarting: UNAVAILABLE) is retried, and not once the journal failed for good:
        // no retry in this process can make it durable then. Unacked, the delivery goes to a
        // healthy executor once its ack wait ends.
        retryable: (err) => isRetryableClass(classifyError(err)) && !journalFailed(),
        onRetry: (err, delay) => {
          metrics.recordRetries.inc();
          log.warn(
            { err: describeError(err), class: classifyError(err), retryInMs: delay },
            "the journal could not take the output; keeping it and retrying (not acked)",
          );
        },
      },
    });
  }

  /** One delivery as an `idem.delivery` span continuing the job's trace (see `handle`). */
  function handle(d: Delivery, heartbeatMs: number): Promise<void> {
    const attributes = {
      "idem.job_id": d.job.jobId,
      "idem.agent": d.job.agent,
      "idem.delivery.count": d.deliveries,
      "idem.transport": transport,
    };
    return tracing.inSpan(
      "idem.delivery",
      { parent: d.traceparent, kind: "consumer", attributes },
      (span) => handleTraced(d, heartbeatMs, span),
    );
  }

  async function handleTraced(d: Delivery, heartbeatMs: number, span: TraceSpan): Promise<void> {
    const outcome = (o: string) => span.setAttributes({ "idem.delivery.outcome": o });
    const job = d.job;
    const jlog = log.child({ jobId: job.jobId, agent: job.agent, delivery: d.deliveries });
    metrics.deliveries.inc({ transport });
    if (working.has(job.jobId)) {
      // This process is running this job already (a redelivery overtook a slow delivery): never run
      // the agent twice, whatever the journal claim says.
      jlog.info("this job is in progress here: waiting");
      outcome("held");
      metrics.naks.inc({ reason: "held" });
      await d.later(Math.max(100, heartbeatMs * 3));
      return;
    }
    // The claim checks the journal first: a recorded output (durable before the answer) means a
    // redelivery, acked without running the agent.
    const claim = await d.claim();
    if (claim.status === "recorded") {
      metrics.skippedRedeliveries.inc();
      outcome("redelivery-skipped");
      jlog.info("output already recorded: acking the redelivery without running the agent");
      await journal.events.append({
        jobId: job.jobId,
        type: JOURNAL_EVENTS.REDELIVERY_SKIPPED,
        data: { deliveries: d.deliveries, transport },
        actor: owner,
      });
      await d.ack();
      return;
    }
    if (claim.status === "held") {
      const delay = Math.max(100, claim.until - clock.now() + 50);
      jlog.info({ retryInMs: delay }, "another delivery of this job is in progress: waiting");
      outcome("held");
      metrics.naks.inc({ reason: "held" });
      await d.later(delay);
      return;
    }
    if (claim.status === "dead" || claim.status === "conflict") {
      outcome(claim.status);
      jlog.warn(
        { status: claim.status },
        claim.status === "dead"
          ? "job is dead-lettered: dropping this delivery (use idem dlq retry)"
          : "a job with this ID but another input is already known: dropping this delivery",
      );
      await d.ack();
      return;
    }
    const lease = claim.lease;
    working.add(job.jobId);

    // Heartbeats keep the delivery (and the claim) alive while the agent runs and while the record
    // is retried.
    const beat = setInterval(() => {
      d.heartbeat(lease).catch((e) => {
        if (!journalFailed()) jlog.warn({ err: describeError(e) }, "heartbeat failed");
      });
    }, heartbeatMs);
    try {
      let output: CheckedOutput;
      const started = performance.now();
      const run = tracing.start("idem.agent.run", {
        parent: span,
        attributes: { "idem.job_id": job.jobId, "idem.agent": job.agent },
      });
      try {
        const raw = await runWithTimeout(runner, job, timeoutOf(job.agent), jlog, fatalSignal);
        fault(FAULT_POINTS.EXECUTOR_AFTER_RUN);
        const v = checkOutput(completeOutput(raw, job), config);
        if (!isCheckedOutput(v)) {
          metrics.invalid.inc({ source: "executor" });
          throw new IdemError(v.code, `invalid output: ${describeIssues(v.issues)}`, {
            details: { issues: v.issues },
          });
        }
        output = v;
        metrics.agentRunSeconds.observe(
          { agent: job.agent, outcome: "ok" },
          (performance.now() - started) / 1000,
        );
        run.end();
      } catch (e) {
        metrics.agentRunSeconds.observe(
          { agent: job.agent, outcome: "failed" },
          (performance.now() - started) / 1000,
        );
        run.fail(e);
        run.end();
        outcome("failed");
        // The agent is no longer running and nothing is left to record: a claim of this job that
        // comes while the failure is being written (due again at once with no backoff) runs it.
        working.delete(job.jobId);
        await fail(d, lease, e, jlog);
        return;
      }
      // The record keeps the record span's trace context: the interpreter's spans continue it.
      const result = await tracing.inSpan(
        "idem.record",
        { parent: span, attributes: { "idem.job_id": job.jobId, "idem.agent": job.agent } },
        async (recordSpan) => {
          const r = await recordDurably(output, job, jlog, recordSpan.traceparent);
          recordSpan.setAttributes({ "idem.record.status": r.status });
          return r;
        },
      );
      outcome(result.status);
      if (result.status === "invalid") {
        // checkOutput passed above: recordOutput checks nothing again.
        throw new IdemError("INVARIANT_VIOLATION", "a checked output was refused as invalid");
      }
      if (result.status === "conflict") {
        jlog.warn(
          { existingHash: result.existingHash },
          "another output for this job was recorded first; this one is kept in rejections",
        );
      }
      fault(FAULT_POINTS.EXECUTOR_AFTER_RECORD);
      clearInterval(beat);
      await d.ack();
      jlog.info({ status: result.status }, "output recorded and acked");
    } finally {
      clearInterval(beat);
      working.delete(job.jobId);
    }
  }

  async function fail(d: Delivery, lease: JobLease, e: unknown, jlog: Logger): Promise<void> {
    // Not the job's failure: the delivery is left unacked, for a healthy executor, uncounted here.
    if (journalFailed()) return;
    if (options.abandoning?.()) return giveBack(d, lease, jlog);
    const cls = classifyError(e);
    const error = describeError(e);
    const job = d.job;
    if (d.deliveries >= queue.maxDeliver) {
      jlog.error({ class: cls, err: error }, "delivery failed for the last time: dead letter");
      try {
        await journal.deadLetters.add(
          job.jobId,
          { class: cls, error, deliveries: d.deliveries, agent: job.agent },
          lease,
        );
        await deadLettered(job.jobId);
      } catch (dlErr) {
        // On JetStream the MAX_DELIVERIES/MSG_TERMINATED advisory records it later.
        jlog.error({ err: describeError(dlErr) }, "could not record the dead letter");
      }
      await d.giveUp();
      return;
    }
    const delay = scheduledDelay(queue.backoffMs, d.deliveries - 1, 0);
    jlog.warn(
      { class: cls, err: error, retryInMs: delay },
      "delivery failed: retrying after backoff",
    );
    metrics.naks.inc({ reason: "failed" });
    try {
      await journal.jobs.fail(lease, { class: cls, error, nextAt: clock.now() + delay });
    } catch (fErr) {
      jlog.error({ err: describeError(fErr) }, "could not record the failed delivery");
    }
    await d.later(delay);
  }

  /**
   * An abandoning executor killed the agent: not the job's failure. The journal's claim is
   * released (due at once, this delivery uncounted) and the message given back at once.
   */
  async function giveBack(d: Delivery, lease: JobLease, jlog: Logger): Promise<void> {
    try {
      await journal.jobs.release(lease, {
        reason: `executor ${owner} stopped before its agent finished (queue.stopGraceMs over)`,
      });
    } catch (rErr) {
      jlog.error({ err: describeError(rErr) }, "could not give the abandoned job back");
    }
    await d.later(0);
    options.onAbandoned?.(d.job.jobId);
    jlog.warn(
      transport === "embedded"
        ? "abandoned: the agent's process group was killed; the job is queued again, due now, this delivery not counted"
        : "abandoned: the agent's process group was killed; the job is given back to JetStream for redelivery at once (JetStream counts it toward maxDeliver)",
    );
  }

  return {
    handle,
    isWorking: (jobId) => working.has(jobId),
    inProgress: () => [...working],
    deadLettered,
  };
}
