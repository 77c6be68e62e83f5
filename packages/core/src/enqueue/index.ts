export type { BatchEnqueueResult, EnqueueFailure, EnqueueOutcome } from "./enqueue-job.js";
export { enqueueJob, enqueueJobs, retryDeadLetter } from "./enqueue-job.js";
export type { JobFile, JobFileProblems } from "./job-file.js";
export { parseJobFile } from "./job-file.js";
