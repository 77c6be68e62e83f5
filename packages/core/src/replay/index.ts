export { createReplayRuns } from "./create-replay-runs.js";
export type { PlanAction, PlanEntry, ReplayPlan } from "./replay-plan.js";
export { buildReplayPlan, PLAN_ACTIONS } from "./replay-plan.js";
