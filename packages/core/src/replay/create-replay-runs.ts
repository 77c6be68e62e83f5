import type { JournalStore, RunRecord } from "@idem/journal";
import { noopTracing, type Tracing } from "@idem/runtime";
import { describeFilter } from "./effect-filter.js";
import type { ReplayPlan } from "./replay-plan.js";

/**
 * Creates the next run generation (pending, empty effects ledger) of every output a replay plan
 * selected (`plan.jobIds`; the busy ones are left alone, and so is an output that became busy
 * since the plan), in recording order, in one journal transaction. Each generation's interpreter
 * decides every effect again and probes the targets, so replaying twice never applies an effect
 * twice: a second replay only makes one more generation that finds everything present.
 * `forceUnprobeable` marks the new runs to send again effects that cannot be probed and were sent.
 *
 * Each new run carries the plan's effect filter (`plan.only`: its interpreter takes only those
 * effects) and its lineage: `actor`, `reason` (as given; front ends require one, see
 * `replayReason`), the operator's selection (`plan.selection`), the filter and the generation it
 * replays, recorded with the run and in its `run.replayed` event. A filtered run orders only on
 * the targets of the effects it takes (`plan.runTargets`).
 *
 * With `tracing`, each created run is an `idem.replay` span in its output's own trace (continuing
 * the traceparent kept with the record), as the new generation's interpretation will be.
 * Journal errors propagate (nothing is created then).
 */
export async function createReplayRuns(
  journal: JournalStore,
  plan: Pick<ReplayPlan, "jobIds"> & Partial<Pick<ReplayPlan, "selection" | "only" | "runTargets">>,
  options: { actor: string; reason?: string; forceUnprobeable?: boolean; tracing?: Tracing },
): Promise<RunRecord[]> {
  if (plan.jobIds.length === 0) return [];
  const tracing = options.tracing ?? noopTracing;
  const startTime = Date.now();
  const forceUnprobeable = options.forceUnprobeable ?? false;
  const created = await journal.runs.replay(
    { jobIds: plan.jobIds },
    {
      actor: options.actor,
      forceUnprobeable,
      ...(options.reason !== undefined && { reason: options.reason }),
      ...(plan.selection !== undefined && { selection: plan.selection }),
      only: plan.only ?? null,
      ...(plan.only && plan.runTargets && { targets: plan.runTargets }),
    },
  );
  if (tracing.enabled && created.length > 0) {
    const outputs = await journal.outputs.select({ jobIds: created.map((r) => r.jobId) });
    const traceOf = new Map(outputs.map((o) => [o.jobId, o.traceparent]));
    for (const run of created) {
      tracing
        .start("idem.replay", {
          parent: traceOf.get(run.jobId),
          startTime,
          attributes: {
            "idem.job_id": run.jobId,
            "idem.generation": run.generation,
            "idem.replay.actor": options.actor,
            "idem.replay.force_unprobeable": forceUnprobeable,
            "idem.replay.replays_generation": run.replay?.replaysGeneration,
            // The filter, not the reason: a reason is free text, kept in the journal only.
            "idem.replay.only": run.only ? describeFilter(run.only) : undefined,
          },
        })
        .end();
    }
  }
  return created;
}
