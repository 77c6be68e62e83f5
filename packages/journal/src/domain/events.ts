import type { ReplayLineage } from "../port/runs.js";
import type { EffectState } from "./states.js";

/**
 * The event vocabulary of the journal's append-only log: every type an adapter writes, and the
 * ones the apps append through `events.append`. Audits count them by these names, so a name never
 * changes once written.
 */
export const JOURNAL_EVENTS = {
  /** A new output was recorded (run generation 1 created). */
  OUTPUT_RECORDED: "output.recorded",
  /** The same output (same content hash) was submitted again: nothing written but this event. */
  OUTPUT_DUPLICATE: "output.duplicate",
  /** A different output for a recorded job ID was refused and kept in `rejections`. */
  OUTPUT_CONFLICT: "output.conflict",
  /** A run was claimed under a fresh lease. */
  RUN_CLAIMED: "run.claimed",
  /** A run whose lease expired was taken over (a holder crashed). */
  RUN_TAKEOVER: "run.takeover",
  /** A run was given back without counting an expiry (graceful shutdown). */
  RUN_RELEASED: "run.released",
  /** A run failed an attempt and waits for its next one. */
  RUN_FAILED: "run.failed",
  /** A run finished with every effect settled. */
  RUN_DONE: "run.done",
  /** A run went dead: no more automatic attempts. */
  RUN_DEAD: "run.dead",
  /**
   * A replay created the next generation of a run; its data: generation, forceUnprobeable and the
   * lineage (actor, reason, selection, only, replaysGeneration), as recorded on the run.
   */
  RUN_REPLAYED: "run.replayed",
  /** A human's resolution returned a dead run to pending. */
  RUN_RESUMED: "run.resumed",
  /** An effect's intent was written (or reopened for another attempt). */
  EFFECT_INTENDED: "effect.intended",
  /** A human settled an uncertain (or failed) effect of a dead run. */
  EFFECT_RESOLVED: "effect.resolved",
  /** Settled applied (written as `effect.<state>`, see `effectEvent`). */
  EFFECT_APPLIED: "effect.applied",
  /** Settled present: the probe found the effect already there. */
  EFFECT_PRESENT: "effect.present",
  /** Settled skipped. */
  EFFECT_SKIPPED: "effect.skipped",
  /** Settled failed (a conflict at the target). */
  EFFECT_FAILED: "effect.failed",
  /** Settled uncertain: the outcome could not be known. */
  EFFECT_UNCERTAIN: "effect.uncertain",
  /** A different job for an enqueued job ID was refused. */
  JOB_CONFLICT: "job.conflict",
  /** A delivery of a job failed; it is queued again. */
  JOB_FAILED: "job.failed",
  /** A job was dead-lettered. */
  JOB_DEAD: "job.dead",
  /** A delivery was given back unfinished (its executor stopped): queued again, uncounted. */
  JOB_RELEASED: "job.released",
  /** A dead letter was retried (written as `job.<action>`, see `deadLetterEvent`). */
  JOB_RETRY: "job.retry",
  /** A dead letter was dismissed. */
  JOB_DISMISS: "job.dismiss",
  /** A prune removed outputs and their history. */
  JOURNAL_PRUNED: "journal.pruned",
  /** Appended by the enqueue operation: a job was put in the outbox/queue. */
  JOB_ENQUEUED: "job.enqueued",
  /** Appended by the enqueue operation: the same job was enqueued again. */
  JOB_DUPLICATE: "job.duplicate",
  /** Appended by the enqueue operation: publishing an outbox job failed. */
  JOB_PUBLISH_FAILED: "job.publish-failed",
  /**
   * A run stopped before an effect that needs a person's approval (docs/approvals.md): awaiting.
   * Data: generation, digest (the output's content hash), effects (indexes), rules, expiresAt.
   */
  APPROVAL_REQUESTED: "approval.requested",
  /**
   * A person approved the awaited effects: the run is pending again. Data: generation, digest,
   * effects, reason, expiresAt (the approval is usable until then); the actor is the approver.
   */
  APPROVAL_GRANTED: "approval.granted",
  /** A person rejected: the run ended dead (class `rejected`). Data: generation, digest, reason. */
  APPROVAL_REJECTED: "approval.rejected",
  /** Nobody decided before the request expired: the run ended dead (class `rejected`). */
  APPROVAL_EXPIRED: "approval.expired",
  /** A notice (or its reminder) that a run waits was sent. Data: generation, reminder, to. */
  APPROVAL_NOTICE: "approval.notice",
  /** Appended by the executor: a delivery of a recorded job was acked without running it. */
  REDELIVERY_SKIPPED: "redelivery.skipped",
} as const;

/** An event type of the journal's vocabulary. */
export type JournalEventType = (typeof JOURNAL_EVENTS)[keyof typeof JOURNAL_EVENTS];

/** The event a settle writes: `effect.<state>`. */
export const effectEvent = (state: EffectState): `effect.${EffectState}` => `effect.${state}`;

/** The event a dead letter's resolution writes: `job.retry` or `job.dismiss`. */
export const deadLetterEvent = (action: "retry" | "dismiss"): "job.retry" | "job.dismiss" =>
  `job.${action}`;

/** The data of a `run.replayed` event: the new generation, its force flag and its lineage. */
export const replayedEvent = (
  generation: number,
  forceUnprobeable: boolean,
  lineage: ReplayLineage,
): Record<string, unknown> => ({ generation, forceUnprobeable, ...lineage });
