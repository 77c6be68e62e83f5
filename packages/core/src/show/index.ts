export type { JobView, ShownEffect } from "./show-job.js";
export { showArchivedJob, showJob } from "./show-job.js";
