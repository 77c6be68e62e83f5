export type { DeadLetterListing, DeadRun } from "./list-dead-letters.js";
export { listDeadLetters } from "./list-dead-letters.js";
export type { UncertainResolution } from "./resolve-uncertain.js";
export { resolveUncertain } from "./resolve-uncertain.js";
export type { RetryOutcome } from "./retry-dead.js";
export { retryDead } from "./retry-dead.js";
