export { canonicalJson, contentHash, sha256Hex } from "./canonical.js";
export { checkJsonShape, describeJsonError, MAX_JSON_DEPTH } from "./check-json-shape.js";
export type {
  AgentConfig,
  Config,
  ConfigIssue,
  ConfigResult,
  HttpTarget,
  ParseConfigOptions,
  PublishTarget,
  RepoConfig,
  RootConfig,
} from "./config.js";
export {
  ConfigFileSchema,
  defaultConfig,
  isSafeBranchName,
  issuePath,
  parseConfig,
} from "./config.js";
export type { InvariantViolation } from "./config-invariants.js";
export { checkConfigInvariants, redeliveryHorizonMs } from "./config-invariants.js";
export { effectTarget, effectTargets } from "./effect-targets.js";
export type { ErrorCode, FailureClass, IdemErrorOptions } from "./errors.js";
export {
  classifyError,
  describeError,
  ERROR_CODES,
  FAILURE_CLASSES,
  IdemError,
  isIdemError,
  isRetryableClass,
} from "./errors.js";
export type { FaultHook, FaultPoint } from "./faults.js";
export { createFaultHook, FAULT_POINTS, noFault } from "./faults.js";
export type { EnqueueAnswer, StatusReport, SubmitAnswer } from "./http-api.js";
export {
  EnqueueAnswerSchema,
  ErrorBodySchema,
  HealthySchema,
  JobAlreadyEnqueuedSchema,
  JobEnqueuedSchema,
  JobProblemsSchema,
  OutputRecordSchema,
  ServiceUnavailableSchema,
  StatusReportSchema,
  SubmitAnswerSchema,
  SubmitConflictSchema,
  SubmitDuplicateSchema,
  SubmitInvalidSchema,
  SubmitRecordedSchema,
  UnhealthySchema,
  ValidationIssueSchema,
} from "./http-api.js";
export {
  AGENT_PATTERN,
  ALIAS_PATTERN,
  EFFECT_TRAILER,
  effectKey,
  isJobId,
  JOB_ID_PATTERN,
  parseEffectKey,
  retryMsgId,
} from "./ids.js";
export type { JsonSchemaDocument, JsonSchemaName } from "./json-schemas.js";
export { JSON_SCHEMA_NAMES, jsonSchemaOf, jsonSchemaText } from "./json-schemas.js";
export type { NatsConfig } from "./nats-config.js";
export { NatsConfigSchema, natsServers } from "./nats-config.js";
export type { OpenApiDocument } from "./openapi.js";
export { HTTP_API_VERSION, openApiDocument, openApiText } from "./openapi.js";
export type {
  AgentOutput,
  EffectKind,
  EffectSpec,
  FileWriteSpec,
  GitCommitSpec,
  GitPatchSpec,
  HttpRequestSpec,
  Job,
  NatsPublishSpec,
  Validated,
  ValidationIssue,
} from "./records.js";
export {
  AgentOutputSchema,
  EFFECT_KINDS,
  EffectSpecSchema,
  FileWriteSpecSchema,
  GitCommitSpecSchema,
  GitPatchSpecSchema,
  HttpRequestSpecSchema,
  JobSchema,
  NatsPublishSpecSchema,
} from "./records.js";
export { redactUrl, urlHasCredentials } from "./redact-url.js";
export type { Backoff, BackoffPolicy, RetryPolicy } from "./retry.js";
export { createBackoff, retry, retryAfter, scheduledDelay } from "./retry.js";
export { sleep } from "./sleep.js";
export type { Clock } from "./time.js";
export { ManualClock, parseDuration, parseSince, systemClock } from "./time.js";
export { unsafeRelativePath, unsafeUrlPath } from "./unsafe-relative-path.js";
export { validateJob, validateOutput } from "./validate-output.js";
