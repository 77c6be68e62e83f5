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
