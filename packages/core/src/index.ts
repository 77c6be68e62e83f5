export type {
  DecideEffectInput,
  EffectCapabilities,
  EffectDecision,
} from "./decide/decide-effect.js";
export { decideEffect } from "./decide/decide-effect.js";
export { FileWriteIndex } from "./decide/file-write-index.js";
export type { BatchEnqueueResult, EnqueueFailure, EnqueueOutcome } from "./enqueue/enqueue-job.js";
export { enqueueJob, enqueueJobs, retryDeadLetter } from "./enqueue/enqueue-job.js";
export * from "./runtime/index.js";
export type { SubmitMetrics, SubmitResult } from "./submit/submit-output.js";
export { parseSubmission, SUBMIT_HTTP_STATUS, submitOutput } from "./submit/submit-output.js";
export * from "./targets/index.js";
