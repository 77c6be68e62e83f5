export { aliasOf } from "./alias-of.js";
export type { ApprovalDecisionBody } from "./approvals-api.js";
export {
  ApprovalAnswerSchema,
  ApprovalDecisionBodySchema,
  AwaitingApprovalsSchema,
} from "./approvals-api.js";
export type { ApprovalRule, ApprovalsConfig } from "./approvals-config.js";
export {
  APPROVAL_REPLAY,
  ApprovalNoticeSchema,
  ApprovalRuleSchema,
  ApprovalsConfigSchema,
  NOTICE_AGENT,
} from "./approvals-config.js";
export { canonicalJson, contentHash, sha256Hex } from "./canonical.js";
export { checkJsonShape, describeJsonError, MAX_JSON_DEPTH } from "./check-json-shape.js";
export type {
  AgentConfig,
  Config,
  ConfigIssue,
  ConfigResult,
  ParseConfigOptions,
} from "./config.js";
export {
  ConfigFileSchema,
  defaultConfig,
  issuePath,
  NO_CREDENTIALS,
  parseConfig,
} from "./config.js";
export type { InvariantViolation } from "./config-invariants.js";
export { checkConfigInvariants, redeliveryHorizonMs } from "./config-invariants.js";
export { ms, positiveMs } from "./config-parts.js";
export type { AgentScope, CredentialConfig } from "./credentials-config.js";
export {
  AgentScopeSchema,
  CredentialConfigSchema,
  CredentialsConfigSchema,
} from "./credentials-config.js";
export type {
  ErrorCode,
  ErrorHttpStatus,
  ExitCode,
  FailureClass,
  IdemErrorOptions,
} from "./errors.js";
export {
  classifyError,
  describeError,
  ERROR_CODES,
  EXIT_CODES,
  exitCodeOfError,
  FAILURE_CLASSES,
  httpStatusOfError,
  IdemError,
  isIdemError,
  isRetryableClass,
  UNCODED_ERROR,
} from "./errors.js";
export type { FaultHook, FaultPoint } from "./faults.js";
export { createFaultHook, FAULT_POINTS, isKindFaultPoint, noFault } from "./faults.js";
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
  SubmitForbiddenSchema,
  SubmitInvalidSchema,
  SubmitRecordedSchema,
  UnhealthySchema,
  ValidationIssueSchema,
} from "./http-api.js";
export { unsafeHttpHeaderValue } from "./http-header-value.js";
export {
  AGENT_PATTERN,
  ALIAS_PATTERN,
  effectKey,
  isJobId,
  JOB_ID_PATTERN,
  parseEffectKey,
  retryMsgId,
} from "./ids.js";
export type { JournalLocation } from "./journal-location.js";
export { journalLocationOf } from "./journal-location.js";
export type { EffectSchemas, JsonSchemaDocument, JsonSchemaName } from "./json-schemas.js";
export {
  agentOutputSchemaOf,
  JSON_SCHEMA_NAMES,
  jsonSchemaOf,
  jsonSchemaText,
} from "./json-schemas.js";
export type { KindConfig } from "./kinds-config.js";
export { KindConfigSchema } from "./kinds-config.js";
export type { NatsConfig } from "./nats-config.js";
export { NatsConfigSchema, natsServers } from "./nats-config.js";
export type { NatsFailure } from "./nats-failure.js";
export { natsFailureOf } from "./nats-failure.js";
export type { OpenApiDocument } from "./openapi.js";
export { HTTP_API_VERSION, openApiDocument, openApiText } from "./openapi.js";
export type { AgentOutput, EffectSpec, Job, Validated, ValidationIssue } from "./records.js";
export {
  AgentNameSchema,
  AgentOutputSchema,
  EffectSpecSchema,
  JobIdSchema,
  JobSchema,
  JsonValueSchema,
} from "./records.js";
export { redactSecret, redactUrl, urlHasCredentials } from "./redact-url.js";
export type { Backoff, BackoffPolicy, RetryPolicy } from "./retry.js";
export { createBackoff, retry, retryAfter, scheduledDelay } from "./retry.js";
export { sleep } from "./sleep.js";
export {
  AliasSchema,
  HeadersSchema,
  HttpHeadersSchema,
  RESERVED_HEADERS,
} from "./spec-parts.js";
export type {
  ActiveRunState,
  EffectState,
  JobState,
  RunState,
  SettledEffectState,
} from "./states.js";
export {
  ACTIVE_RUN_STATES,
  BLOCKING_EFFECT_STATES,
  EFFECT_STATES,
  isActiveRun,
  isSettledEffect,
  JOB_STATES,
  JOB_TRANSITIONS,
  REINTENDABLE_EFFECT_STATES,
  RESOLVABLE_EFFECT_STATES,
  RUN_STATES,
  RUN_TRANSITIONS,
  SETTLED_EFFECT_STATES,
  UNFINISHED_JOB_STATES,
  UNFINISHED_RUN_STATES,
} from "./states.js";
export type { StrictJson } from "./strict-json.js";
export { parseStrictJson } from "./strict-json.js";
export {
  DEFAULT_SUBJECT_PREFIX,
  jobSubject,
  jobsSubjects,
  SUBJECT_PREFIX_PATTERN,
  submitSubject,
} from "./subjects.js";
export type { Clock } from "./time.js";
export { ManualClock, parseDuration, parseSince, sleepOn, systemClock } from "./time.js";
export { unsafeUrlPath } from "./unsafe-relative-path.js";
export { validateJob, validateOutput } from "./validate-output.js";
