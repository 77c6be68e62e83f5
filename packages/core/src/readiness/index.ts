// What a long-running process starting during an outage waits out.
export { isNotReadyYet } from "./not-ready.js";
