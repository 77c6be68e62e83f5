export type { JobView, ShownEffect, ShownLineage } from "./show-job.js";
export { showArchivedJob, showJob } from "./show-job.js";
export type { PendingJobView } from "./show-pending-job.js";
export { showPendingJob } from "./show-pending-job.js";
