// The interpretation of one claimed run and of each of its effects (decide, intent, probe, apply,
// settle, with the fault points between), and the order between the runs one process holds at
// once. The interpreter app keeps the process around it: the claim loop, the pool, signals, metrics.
export { interpretRun } from "./interpret-run.js";
export type {
  InterpretCounter,
  InterpretMetrics,
  InterpretRunContext,
  RunOutcome,
} from "./run-context.js";
export type { EffectTurn, HeldRun, RunTurn } from "./target-turns.js";
export { TargetTurns } from "./target-turns.js";
