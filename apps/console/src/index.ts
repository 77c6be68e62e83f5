/** idem's operator console: server-rendered pages over @idem/core, served by `idem console`. */
export type { Console, ConsoleOptions, RunningConsole } from "./console-app.js";
export { createConsole, startConsole } from "./console-app.js";
export type { Targets } from "./deps.js";
