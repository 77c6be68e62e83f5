import type { JobLease } from "@idem/journal";
import type { Logger } from "@idem/runtime";
import { classifyError, describeError, scheduledDelay } from "@idem/schema";
import type { Delivery, DeliveryHandlerOptions } from "./delivery.js";

/**
 * Settles a delivery whose run failed: given back after `queue.backoffMs`, dead-lettered at
 * `queue.maxDeliver`; given back at once, uncounted, when the executor is abandoning its runs; left
 * unsettled (for a healthy executor) when the journal has failed for good. Never throws but what
 * the transport's settle throws.
 */
export async function failDelivery(
  o: DeliveryHandlerOptions,
  d: Delivery,
  lease: JobLease,
  e: unknown,
  jlog: Logger,
): Promise<void> {
  // Not the job's failure: the delivery is left unacked, for a healthy executor, uncounted here.
  if (o.journalFailed()) return;
  if (o.abandoning?.()) return giveBack(o, d, lease, jlog);
  const cls = classifyError(e);
  const error = describeError(e);
  const job = d.job;
  if (d.deliveries >= o.config.queue.maxDeliver) {
    jlog.error({ class: cls, err: error }, "delivery failed for the last time: dead letter");
    try {
      await o.journal.deadLetters.add(
        job.jobId,
        { class: cls, error, deliveries: d.deliveries, agent: job.agent },
        lease,
      );
      await o.onDeadLetter(job.jobId);
    } catch (dlErr) {
      // On JetStream the MAX_DELIVERIES/MSG_TERMINATED advisory records it later.
      jlog.error({ err: describeError(dlErr) }, "could not record the dead letter");
    }
    await d.giveUp();
    return;
  }
  const delay = scheduledDelay(o.config.queue.backoffMs, d.deliveries - 1, 0);
  jlog.warn(
    { class: cls, err: error, retryInMs: delay },
    "delivery failed: retrying after backoff",
  );
  o.metrics.naks.inc({ reason: "failed" });
  try {
    await o.journal.jobs.fail(lease, { class: cls, error, nextAt: o.clock.now() + delay });
  } catch (fErr) {
    jlog.error({ err: describeError(fErr) }, "could not record the failed delivery");
  }
  await d.later(delay);
}

/**
 * An abandoning executor killed the agent: not the job's failure. The journal's claim is
 * released (due at once, this delivery uncounted) and the message given back at once.
 */
async function giveBack(
  o: DeliveryHandlerOptions,
  d: Delivery,
  lease: JobLease,
  jlog: Logger,
): Promise<void> {
  try {
    await o.journal.jobs.release(lease, {
      reason: `executor ${o.owner} stopped before its agent finished (queue.stopGraceMs over)`,
    });
  } catch (rErr) {
    jlog.error({ err: describeError(rErr) }, "could not give the abandoned job back");
  }
  await d.later(0);
  o.onAbandoned?.(d.job.jobId);
  jlog.warn(
    o.transport === "embedded"
      ? "abandoned: the agent's process group was killed; the job is queued again, due now, this delivery not counted"
      : "abandoned: the agent's process group was killed; the job is given back to JetStream for redelivery at once (JetStream counts it toward maxDeliver)",
  );
}
