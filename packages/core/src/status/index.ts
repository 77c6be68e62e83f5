export type { LeasedJob } from "./leased-jobs.js";
export { LEASED_SHOWN, readLeasedJobs } from "./leased-jobs.js";
export type {
  ConsumerBacklog,
  JobsListing,
  StreamBacklog,
  WaitingJob,
  WaitingJobState,
} from "./list-jobs.js";
export { describeWaitingJob, listJobs, WAITING_JOB_STATES, waitingState } from "./list-jobs.js";
export { readStatus } from "./read-status.js";
export { readStreamBacklog } from "./stream-backlog.js";
export type { StuckHolder } from "./stuck-holders.js";
export {
  journalLockHolders,
  leaseHoldersPastTime,
  readStuckHolders,
  repoLockHolders,
} from "./stuck-holders.js";
