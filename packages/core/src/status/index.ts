export { readStatus } from "./read-status.js";
