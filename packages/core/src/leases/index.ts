export type {
  DeadHolderSweepOptions,
  DeadHolderSweepResult,
} from "./dead-holders.js";
export { createDeadHolderSweep, DEAD_HOLDER_SWEEP_MS } from "./dead-holders.js";
