export type { SubmitCounter, SubmitMetrics, SubmitResult } from "./submit-output.js";
export {
  oversizedSubmission,
  parseSubmission,
  SUBMIT_HTTP_STATUS,
  submitOutput,
} from "./submit-output.js";
export { submitText } from "./submit-text.js";
