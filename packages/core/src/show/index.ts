export type { JobView, ShownEffect, ShownLineage } from "./show-job.js";
export { showArchivedJob, showJob } from "./show-job.js";
