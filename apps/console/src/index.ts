/** idem's operator console: server-rendered pages over @idem/core, served by `idem console`. */
export type { Console, ConsoleOptions, RunningConsole } from "./console-app.js";
export { createConsole, startConsole } from "./console-app.js";
export type { ConsoleProcessOptions } from "./console-process.js";
export { runConsoleProcess } from "./console-process.js";
export type { Overview, OverviewAlert } from "./views/read-overview.js";
export {
  ACTIVITY_BUCKET_MS,
  ACTIVITY_HOURS,
  activityStart,
  activityUntil,
} from "./views/read-overview.js";
