import type { EffectRecord, JournalStore, RunState } from "@idem/journal";

/** A human's decision on an uncertain effect, as recorded, and the run's state after it. */
export interface UncertainResolution {
  effect: EffectRecord;
  /** The state of the output's latest run after the decision (pending again: it goes on with the rest). */
  run: RunState | undefined;
}

/**
 * `idem dlq resolve JOB`: settles the uncertain effect of a dead run as `applied` (it did happen) or
 * `skipped` (it did not and must not be sent), records the reason and actor as an event, and returns
 * the run to pending so an interpreter goes on with the rest. The first unsettled effect is taken:
 * uncertain, else failed, else intended. Not repeatable: once settled the effect is no longer open.
 * @throws INVALID_INPUT without a reason; NOT_FOUND when the job has no run; INVALID_STATE when its
 * latest run is not dead or has no unsettled effect.
 */
export async function resolveUncertain(
  journal: JournalStore,
  jobId: string,
  decision: { decision: "applied" | "skipped"; reason: string; actor: string },
): Promise<UncertainResolution> {
  const effect = await journal.ledger.resolve(
    jobId,
    decision.decision,
    decision.reason,
    decision.actor,
  );
  return { effect, run: (await journal.runs.latest(jobId))?.state };
}
