export { changingJobIds } from "./changing-outputs.js";
export { createReplayRuns } from "./create-replay-runs.js";
export type { EffectFilter, ReplayLineage } from "./effect-filter.js";
export {
  checkEffectFilter,
  describeFilter,
  effectInFilter,
  FILTER_OPTIONS,
  filterChoices,
  replayReason,
} from "./effect-filter.js";
export type { ReplayPlanJson } from "./plan-json.js";
export { replayPlanJson } from "./plan-json.js";
export type { KeptEntry, PlanAction, PlanEntry, ReplayPlan } from "./replay-plan.js";
export { buildReplayPlan, PLAN_ACTIONS } from "./replay-plan.js";
