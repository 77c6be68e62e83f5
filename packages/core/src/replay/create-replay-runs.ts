import type { JournalStore, RunRecord } from "@idem/journal";
import type { ReplayPlan } from "./replay-plan.js";

/**
 * Creates the next run generation (pending, empty effects ledger) of every output a replay plan
 * selected (`plan.jobIds`; the busy ones are left alone, and so is an output that became busy
 * since the plan), in recording order, in one journal transaction. Each generation's interpreter
 * decides every effect again and probes the targets, so replaying twice never applies an effect
 * twice: a second replay only makes one more generation that finds everything present.
 * `forceUnprobeable` marks the new runs to send again effects that cannot be probed and were sent.
 * Journal errors propagate (nothing is created then).
 */
export async function createReplayRuns(
  journal: JournalStore,
  plan: Pick<ReplayPlan, "jobIds">,
  options: { actor: string; forceUnprobeable?: boolean },
): Promise<RunRecord[]> {
  if (plan.jobIds.length === 0) return [];
  return journal.runs.replay(
    { jobIds: plan.jobIds },
    { actor: options.actor, forceUnprobeable: options.forceUnprobeable ?? false },
  );
}
