// The targets façade: the effect kinds of @idem/effects wired with the NATS transport of @idem/nats.
export type { OpenTargetsOptions } from "./open-targets.js";
export { openTargets } from "./open-targets.js";
