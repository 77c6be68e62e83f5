// @idem/core: the domain operations every front end calls. Each folder exports through its own
// index; this file only lists them.
export * from "./archive/index.js";
export * from "./audit/index.js";
export * from "./console-views/index.js";
export * from "./dead-letters/index.js";
export * from "./decide/index.js";
export * from "./doctor/index.js";
export * from "./enqueue/index.js";
export * from "./interpret/index.js";
export * from "./record/index.js";
export * from "./replay/index.js";
export * from "./runtime/index.js";
export * from "./show/index.js";
export * from "./status/index.js";
export * from "./submit/index.js";
export * from "./targets/index.js";
export * from "./telemetry/index.js";
export * from "./validate/index.js";
