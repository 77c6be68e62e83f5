export type {
  DecideEffectInput,
  EffectCapabilities,
  EffectDecision,
} from "./decide-effect.js";
export { decideEffect } from "./decide-effect.js";
export { FileWriteIndex } from "./file-write-index.js";
export type {
  DrainResult,
  Interpreter,
  InterpreterOptions,
  RunOutcome,
} from "./interpreter.js";
export { createInterpreter } from "./interpreter.js";
export type { Logger } from "./interpreter-logger.js";
export { createInterpreterLogger } from "./interpreter-logger.js";
export type { InterpreterMetrics } from "./interpreter-metrics.js";
export { createInterpreterMetrics, serveMetrics } from "./interpreter-metrics.js";
