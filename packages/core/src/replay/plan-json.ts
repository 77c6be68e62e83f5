import type { EffectFilter } from "./effect-filter.js";
import type { KeptEntry, PlanEntry, ReplayPlan } from "./replay-plan.js";

/**
 * A replay plan as `idem replay --dry-run --json` prints it (docs/cli.md): the rows, the summary,
 * how many outputs get a generation, the busy ones and, for a replay by kind or target, the filter,
 * the effects outside it (`kept`, action `keep`), the outputs left alone because their latest run
 * is dead (`dead`) and those with no effect inside it (`untouched`). Every
 * front end answers this shape, so the console's plan and the CLI's are the same document.
 */
export interface ReplayPlanJson {
  plan: PlanEntry[];
  summary: ReplayPlan["summary"];
  outputs: number;
  busy: string[];
  only: EffectFilter | null;
  kept: (KeptEntry & { action: "keep" })[];
  dead: string[];
  untouched: string[];
}

/** The plan's JSON document (see `ReplayPlanJson`); fields copied by name, nothing else. */
export function replayPlanJson(p: ReplayPlan): ReplayPlanJson {
  return {
    plan: p.plan.map(({ key, jobId, kind, action, reason, generation }) => ({
      key,
      jobId,
      kind,
      action,
      reason,
      generation,
    })),
    summary: p.summary,
    outputs: p.jobIds.length,
    busy: p.busy,
    only: p.only,
    kept: p.kept.map(({ key, jobId, kind, state, stateGeneration, reason }) => ({
      key,
      jobId,
      kind,
      action: "keep" as const,
      state,
      stateGeneration,
      reason,
    })),
    dead: p.dead,
    untouched: p.untouched,
  };
}
