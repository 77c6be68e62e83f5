export type { SubmitMetrics, SubmitResult } from "./submit-output.js";
export { parseSubmission, SUBMIT_HTTP_STATUS, submitOutput } from "./submit-output.js";
