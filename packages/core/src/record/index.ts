// The one path by which an output becomes a record (every front end and the executor).
export type {
  CheckedOutput,
  ForbiddenOutput,
  InvalidOutput,
  RecordCounter,
  RecordMetrics,
  RecordOutcome,
  RecordOutputRequest,
  RecordRetry,
} from "./record-output.js";
export { checkOutput, describeIssues, isCheckedOutput, recordOutput } from "./record-output.js";
