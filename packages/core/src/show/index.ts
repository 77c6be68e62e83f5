export type { DamagedJobView, JobView, ShownEffect, ShownLineage } from "./show-job.js";
export { damagedOutputProblem, showArchivedJob, showDamagedJob, showJob } from "./show-job.js";
export type { PendingJobView } from "./show-pending-job.js";
export { showPendingJob } from "./show-pending-job.js";
