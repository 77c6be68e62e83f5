export type { OutputFile, OutputFileProblems } from "./output-file.js";
export { assertOwnJobs, parseOutputFile } from "./output-file.js";
export type { SubmitOutputsOptions } from "./submit-batch.js";
export { submitOutputs } from "./submit-batch.js";
export type {
  SubmitMetrics,
  SubmitOutputRequest,
  SubmitResult,
  SubmitTrace,
} from "./submit-output.js";
export {
  oversizedSubmission,
  parseSubmission,
  SUBMIT_HTTP_STATUS,
  submitOutput,
} from "./submit-output.js";
export { submitText } from "./submit-text.js";
