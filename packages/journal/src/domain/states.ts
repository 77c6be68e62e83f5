// The states of runs, effects and jobs are vocabulary: defined in @idem/schema (states.ts) and
// re-exported here and by this package's index for the callers that import them from the journal.
export type {
  ActiveRunState,
  EffectState,
  JobState,
  RunState,
  SettledEffectState,
} from "@idem/schema";
export {
  ACTIVE_RUN_STATES,
  BLOCKING_EFFECT_STATES,
  EFFECT_STATES,
  isActiveRun,
  isSettledEffect,
  JOB_STATES,
  JOB_TRANSITIONS,
  REINTENDABLE_EFFECT_STATES,
  RESOLVABLE_EFFECT_STATES,
  RUN_STATES,
  RUN_TRANSITIONS,
  SETTLED_EFFECT_STATES,
  UNFINISHED_JOB_STATES,
  UNFINISHED_RUN_STATES,
} from "@idem/schema";

/** A SQL list literal of state names, e.g. `('pending','running','failed')`, for IN clauses. */
export const sqlStateList = (states: readonly string[]): string =>
  `(${states.map((s) => `'${s}'`).join(",")})`;
