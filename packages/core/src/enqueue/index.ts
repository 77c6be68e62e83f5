export type { BatchEnqueueResult, EnqueueFailure, EnqueueOutcome } from "./enqueue-job.js";
export { enqueueJob, enqueueJobs, retryDeadLetter } from "./enqueue-job.js";
