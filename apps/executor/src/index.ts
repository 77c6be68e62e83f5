// @idem/executor: the executor process's library, run by `idem executor` (and `idem up`).
export type { AgentRunner, RunContext } from "./agent-runner.js";
export { createCommandRunner, functionRunner } from "./agent-runner.js";
export type { ApiOptions, ApiServer } from "./api-server.js";
export { createApiApp, startApiServer } from "./api-server.js";
export { checkDeadLetterRate } from "./dead-letter-alert.js";
export type { CreateExecutorOptions, Executor } from "./executor.js";
export { createExecutor } from "./executor.js";
export type { ExecutorMetrics } from "./executor-metrics.js";
export { createExecutorMetrics } from "./executor-metrics.js";
export type { ExecutorProcessOptions } from "./executor-process.js";
export { runExecutorProcess } from "./executor-process.js";
