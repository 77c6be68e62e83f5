export type {
  BatchEnqueueResult,
  EnqueueFailure,
  EnqueueOptions,
  EnqueueOutcome,
} from "./enqueue-job.js";
export { enqueueJob, enqueueJobs, retryDeadLetter } from "./enqueue-job.js";
export type { JobFile, JobFileOptions, JobFileProblems } from "./job-file.js";
export { parseJobFile } from "./job-file.js";
