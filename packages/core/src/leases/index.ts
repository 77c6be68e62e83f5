export type {
  DeadHolderSweepOptions,
  DeadHolderSweepResult,
  EndLeasesIfDeadOptions,
} from "./dead-holders.js";
export {
  createDeadHolderSweep,
  DEAD_HOLDER_SWEEP_MS,
  endLeasesIfDead,
  jobsOfDeadHolders,
} from "./dead-holders.js";
