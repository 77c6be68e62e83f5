import { JOURNAL_EVENTS, type JobLease } from "@idem/journal";
import type { Logger, TraceSpan } from "@idem/runtime";
import {
  classifyError,
  describeError,
  FAULT_POINTS,
  IdemError,
  isRetryableClass,
  type Job,
} from "@idem/schema";
import {
  type CheckedOutput,
  checkOutput,
  describeIssues,
  isCheckedOutput,
  type RecordOutcome,
  recordOutput,
} from "../record/index.js";
import { completeOutput } from "./complete-output.js";
import {
  type Delivery,
  type DeliveryHandler,
  type DeliveryHandlerOptions,
  RECORD_RETRY_MAX_MS,
} from "./delivery.js";
import { failDelivery } from "./failed-delivery.js";

/** What one handler keeps between deliveries: its options and the jobs it works on. */
interface Scope {
  o: DeliveryHandlerOptions;
  /** Job IDs this executor is working on (invariant 3 within one process). */
  working: Set<string>;
}

/** Creates the executor's decision, shared by every transport (see {@link DeliveryHandler}). */
export function createDeliveryHandler(options: DeliveryHandlerOptions): DeliveryHandler {
  const scope: Scope = { o: options, working: new Set() };
  return {
    handle(d, heartbeatMs) {
      const attributes = {
        "idem.job_id": d.job.jobId,
        "idem.agent": d.job.agent,
        "idem.delivery.count": d.deliveries,
        "idem.transport": options.transport,
      };
      return options.tracing.inSpan(
        "idem.delivery",
        { parent: d.traceparent, kind: "consumer", attributes },
        (span) => handleDelivery(scope, d, heartbeatMs, span),
      );
    },
    isWorking: (jobId) => scope.working.has(jobId),
    inProgress: () => [...scope.working],
    deadLettered: (jobId) => options.onDeadLetter(jobId),
  };
}

/** One delivery within its `idem.delivery` span: claimed, then run and recorded, then acked. */
async function handleDelivery(
  scope: Scope,
  d: Delivery,
  heartbeatMs: number,
  span: TraceSpan,
): Promise<void> {
  const { o, working } = scope;
  const outcome = (value: string) => span.setAttributes({ "idem.delivery.outcome": value });
  const job = d.job;
  const jlog = o.log.child({ jobId: job.jobId, agent: job.agent, delivery: d.deliveries });
  o.metrics.deliveries.inc({ transport: o.transport });
  const lease = await claimOrSettle(scope, d, heartbeatMs, jlog, outcome);
  if (!lease) return;
  working.add(job.jobId);
  // Heartbeats keep the delivery (and the claim) alive while the agent runs and while the record
  // is retried.
  const beat = setInterval(() => {
    d.heartbeat(lease).catch((e) => {
      if (!o.journalFailed()) jlog.warn({ err: describeError(e) }, "heartbeat failed");
    });
  }, heartbeatMs);
  try {
    let output: CheckedOutput;
    try {
      output = await runChecked(o, job, jlog, span);
    } catch (e) {
      outcome("failed");
      // The agent is no longer running and nothing is left to record: a claim of this job that
      // comes while the failure is being written (due again at once with no backoff) runs it.
      working.delete(job.jobId);
      await failDelivery(o, d, lease, e, jlog);
      return;
    }
    const result = await recordTraced(o, output, job, jlog, span);
    outcome(result.status);
    o.fault(FAULT_POINTS.EXECUTOR_AFTER_RECORD);
    clearInterval(beat);
    await d.ack();
    jlog.info({ status: result.status }, "output recorded and acked");
  } finally {
    clearInterval(beat);
    working.delete(job.jobId);
  }
}

/**
 * Takes the job's in-progress claim and answers its lease; a delivery that must not run the agent
 * (in progress here or held elsewhere, recorded already, dead or in conflict) is settled here and
 * answers undefined.
 */
async function claimOrSettle(
  { o, working }: Scope,
  d: Delivery,
  heartbeatMs: number,
  jlog: Logger,
  outcome: (value: string) => void,
): Promise<JobLease | undefined> {
  const job = d.job;
  if (working.has(job.jobId)) {
    // This process is running this job already (a redelivery overtook a slow delivery): never run
    // the agent twice, whatever the journal claim says.
    jlog.info("this job is in progress here: waiting");
    outcome("held");
    o.metrics.naks.inc({ reason: "held" });
    await d.later(Math.max(100, heartbeatMs * 3));
    return undefined;
  }
  // The claim checks the journal first: a recorded output (durable before the answer) means a
  // redelivery, acked without running the agent.
  const claim = await d.claim();
  if (claim.status === "acquired") return claim.lease;
  outcome(claim.status === "recorded" ? "redelivery-skipped" : claim.status);
  if (claim.status === "recorded") {
    o.metrics.skippedRedeliveries.inc();
    jlog.info("output already recorded: acking the redelivery without running the agent");
    await o.journal.events.append({
      jobId: job.jobId,
      type: JOURNAL_EVENTS.REDELIVERY_SKIPPED,
      data: { deliveries: d.deliveries, transport: o.transport },
      actor: o.owner,
    });
  } else if (claim.status === "held") {
    const delay = Math.max(100, claim.until - o.clock.now() + 50);
    jlog.info({ retryInMs: delay }, "another delivery of this job is in progress: waiting");
    o.metrics.naks.inc({ reason: "held" });
    await d.later(delay);
    return undefined;
  } else {
    jlog.warn(
      { status: claim.status },
      claim.status === "dead"
        ? "job is dead-lettered: dropping this delivery (use idem dlq retry)"
        : "a job with this ID but another input is already known: dropping this delivery",
    );
  }
  await d.ack();
  return undefined;
}

/**
 * Runs the agent once in an `idem.agent.run` span and checks its output.
 * @throws what the run throws, or the output's validation code (INVALID_OUTPUT...)
 */
async function runChecked(
  o: DeliveryHandlerOptions,
  job: Job,
  jlog: Logger,
  span: TraceSpan,
): Promise<CheckedOutput> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const run = o.tracing.start("idem.agent.run", {
    parent: span,
    attributes: { "idem.job_id": job.jobId, "idem.agent": job.agent },
  });
  try {
    const raw = await o.runAgent(job, jlog, o.fatalSignal);
    o.fault(FAULT_POINTS.EXECUTOR_AFTER_RUN);
    const v = checkOutput(completeOutput(raw, job), o.config);
    if (!isCheckedOutput(v)) {
      o.metrics.invalid.inc({ source: "executor" });
      throw new IdemError(v.code, `invalid output: ${describeIssues(v.issues)}`, {
        details: { issues: v.issues },
      });
    }
    o.metrics.agentRunSeconds.observe({ agent: job.agent, outcome: "ok" }, seconds());
    run.end();
    return v;
  } catch (e) {
    o.metrics.agentRunSeconds.observe({ agent: job.agent, outcome: "failed" }, seconds());
    run.fail(e);
    run.end();
    throw e;
  }
}

/**
 * Records the checked output in an `idem.record` span (whose trace context the record keeps: the
 * interpreter's spans continue it), through core's `recordOutput`, retrying for as long as the
 * journal refuses it (docs/concepts.md, invariant 4).
 */
async function recordTraced(
  o: DeliveryHandlerOptions,
  output: CheckedOutput,
  job: Job,
  jlog: Logger,
  span: TraceSpan,
): Promise<RecordOutcome> {
  const attributes = { "idem.job_id": job.jobId, "idem.agent": job.agent };
  const result = await o.tracing.inSpan("idem.record", { parent: span, attributes }, async (rs) => {
    const r = await recordDurably(o, output, job, jlog, rs.traceparent);
    rs.setAttributes({ "idem.record.status": r.status });
    return r;
  });
  if (result.status === "invalid") {
    // checkOutput passed before: recordOutput checks nothing again.
    throw new IdemError("INVARIANT_VIOLATION", "a checked output was refused as invalid");
  }
  if (result.status === "conflict") {
    jlog.warn(
      { existingHash: result.existingHash },
      "another output for this job was recorded first; this one is kept in rejections",
    );
  }
  return result;
}

function recordDurably(
  o: DeliveryHandlerOptions,
  output: CheckedOutput,
  job: Job,
  jlog: Logger,
  traceparent: string | undefined,
): Promise<RecordOutcome> {
  return recordOutput({
    journal: o.journal,
    config: o.config,
    output,
    source: "executor",
    actor: o.owner,
    // The claimed job is the journal's row (its agent is part of the input's hash).
    jobAgent: job.agent,
    traceparent,
    metrics: o.metrics,
    retry: {
      maxMs: RECORD_RETRY_MAX_MS,
      // Only a failure worth another attempt (a locked or full SQLite file, a PostgreSQL server
      // gone or restarting: UNAVAILABLE) is retried, and not once the journal failed for good:
      // no retry in this process can make it durable then. Unacked, the delivery goes to a
      // healthy executor once its ack wait ends.
      retryable: (err) => isRetryableClass(classifyError(err)) && !o.journalFailed(),
      onRetry: (err, delay) => {
        o.metrics.recordRetries.inc();
        jlog.warn(
          { err: describeError(err), class: classifyError(err), retryInMs: delay },
          "the journal could not take the output; keeping it and retrying (not acked)",
        );
      },
    },
  });
}
