// What a long-running process starting during an outage waits out.
export { isNotReadyYet } from "./not-ready.js";
export { openVerifiedJournal } from "./open-verified-journal.js";
export { whenAvailable } from "./when-available.js";
