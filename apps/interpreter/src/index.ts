// @idem/interpreter: the interpreter process's library, run by `idem interpreter` (and `idem up`).

export type { RunOutcome } from "@idem/core";
export type { DrainResult, Interpreter, InterpreterOptions } from "./interpreter.js";
export { createInterpreter } from "./interpreter.js";
export type { InterpreterMetrics } from "./interpreter-metrics.js";
export { createInterpreterMetrics } from "./interpreter-metrics.js";
export type { InterpreterProcessOptions } from "./interpreter-process.js";
export { runInterpreterProcess } from "./interpreter-process.js";
