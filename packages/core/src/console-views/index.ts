export type {
  OutputRow,
  OutputsFilter,
  OutputsPage,
} from "./list-outputs-page.js";
export { listOutputsPage } from "./list-outputs-page.js";
export type { Overview, OverviewAlert } from "./read-overview.js";
export {
  ACTIVITY_BUCKET_MS,
  ACTIVITY_HOURS,
  activityStart,
  activityUntil,
  readOverview,
} from "./read-overview.js";
export type { ReplayProgress } from "./replay-progress.js";
export { readReplayProgress } from "./replay-progress.js";
