// @idem/core: the domain operations every front end calls (the CLI, the console, the executor and
// the interpreter, the MCP server), each over the journal port, the effects and the config. Each
// folder exports through its own index; this file names every export, so what core offers is read
// here. The process runtime (logger, HTTP and metrics server, telemetry) is @idem/runtime.

export type { AgentGrant, Credentials, Principal } from "./access/index.js";
export {
  assertCredentialScopes,
  grantOf,
  MIN_AGENT_TOKEN_LENGTH,
  OPERATOR,
  resolveCredentials,
  scopeIssues,
} from "./access/index.js";
export type {
  ApprovalInput,
  ApprovalNotice,
  ApprovalResult,
  ApprovalSettings,
  ApprovalSweep,
  ApprovalSweepResult,
  AuditedApproval,
  GrantedApproval,
  RunGate,
  ShownApproval,
} from "./approvals/index.js";
export {
  APPROVAL_SWEEP_MS,
  alwaysRule,
  approvalGrantOf,
  approvalHistory,
  approvalReasons,
  assertApprovalRules,
  createApprovalSweep,
  decideApproval,
  describeApprovalRules,
  gatedEffects,
  globRegExp,
  grantCovers,
  requestIn,
  ruleMatches,
  ruleName,
  runGate,
} from "./approvals/index.js";
export type { BackupResult, PruneReport } from "./archive/index.js";
export {
  ArchiveWriter,
  backupJournal,
  findInArchive,
  pruneCutoff,
  pruneJournal,
} from "./archive/index.js";
export type { AuditReport } from "./audit/index.js";
export { buildAudit, isAuditClean } from "./audit/index.js";
export type {
  DeadLetterListing,
  DeadRun,
  RetryOutcome,
  UncertainResolution,
} from "./dead-letters/index.js";
export { listDeadLetters, resolveUncertain, retryDead } from "./dead-letters/index.js";
export type { DecideEffectInput, EffectCapabilities, EffectDecision } from "./decide/index.js";
export { decideEffect, SupersedeIndex } from "./decide/index.js";
export type { DoctorOptions, DoctorReport, Finding, Severity } from "./doctor/index.js";
export { initialConfig, initWorkspace, runDoctor, verifyJournal } from "./doctor/index.js";
export type { Effects, OpenEffectsOptions } from "./effects/index.js";
export { openEffects } from "./effects/index.js";
export type {
  BatchEnqueueResult,
  EnqueueFailure,
  EnqueueOptions,
  EnqueueOutcome,
  JobFile,
  JobFileOptions,
  JobFileProblems,
} from "./enqueue/index.js";
export { enqueueJob, enqueueJobs, parseJobFile, retryDeadLetter } from "./enqueue/index.js";
export type {
  Delivery,
  DeliveryHandler,
  DeliveryHandlerOptions,
  ExecuteCounter,
  ExecuteMetrics,
} from "./execute/index.js";
export {
  completeOutput,
  createDeliveryHandler,
  RECORD_RETRY_MAX_MS,
  RECOVERY_GRACE_MS,
} from "./execute/index.js";
export type {
  EffectTurn,
  InterpretCounter,
  InterpretMetrics,
  InterpretRunContext,
  RunOutcome,
  RunTurn,
} from "./interpret/index.js";
export { interpretRun, TargetTurns } from "./interpret/index.js";
export type {
  DrillCheck,
  DrilledKindEntry,
  DrillFinding,
  DrillFindingCode,
  DrillInterpret,
  DrillInterpretResult,
  DrillInterpretRun,
  DrillKey,
  DrillStart,
  DrillVerdict,
  KindDrillOptions,
  KindDrillReport,
  KindListing,
  KindModule,
  ListedKind,
} from "./kinds/index.js";
export {
  DRILL_FINDINGS,
  DRILL_OUTPUTS_DEFAULT,
  DRILL_VERDICTS,
  drillConfigOf,
  listKinds,
  loadKindModule,
  resolveKindModule,
  runKindDrill,
  showableGuarantee,
  verdictOf,
} from "./kinds/index.js";
export type {
  DeadHolderSweepOptions,
  DeadHolderSweepResult,
  EndLeasesIfDeadOptions,
} from "./leases/index.js";
export {
  createDeadHolderSweep,
  DEAD_HOLDER_SWEEP_MS,
  endLeasesIfDead,
  jobsOfDeadHolders,
} from "./leases/index.js";
export { isNotReadyYet, openVerifiedJournal, whenAvailable } from "./readiness/index.js";
export type {
  CheckedOutput,
  ForbiddenOutput,
  InvalidOutput,
  RecordCounter,
  RecordMetrics,
  RecordOutcome,
  RecordOutputRequest,
  RecordRetry,
} from "./record/index.js";
export { checkOutput, describeIssues, isCheckedOutput, recordOutput } from "./record/index.js";
export type {
  EffectFilter,
  KeptEntry,
  PlanAction,
  PlanEntry,
  ReplayLineage,
  ReplayPlan,
  ReplayPlanJson,
} from "./replay/index.js";
export {
  buildReplayPlan,
  changingJobIds,
  checkEffectFilter,
  createReplayRuns,
  describeFilter,
  effectInFilter,
  FILTER_OPTIONS,
  filterChoices,
  PLAN_ACTIONS,
  replayPlanJson,
  replayReason,
} from "./replay/index.js";
export type {
  PendingRestore,
  RecoverJournalOptions,
  RecoveryReport,
  RestoreResult,
} from "./restore/index.js";
export {
  acceptRestoreLoss,
  pendingRestore,
  recoverFrom,
  recoverJournal,
  restoreJournal,
} from "./restore/index.js";
export type {
  DamagedJobView,
  JobView,
  PendingJobView,
  ShownEffect,
  ShownLineage,
} from "./show/index.js";
export {
  damagedOutputProblem,
  showArchivedJob,
  showDamagedJob,
  showJob,
  showPendingJob,
} from "./show/index.js";
export type {
  ConsumerBacklog,
  JobsListing,
  LeasedJob,
  StreamBacklog,
  StuckHolder,
  WaitingJob,
  WaitingJobState,
} from "./status/index.js";
export {
  describeWaitingJob,
  journalLockHolders,
  kindLockHolders,
  LEASED_SHOWN,
  leaseHoldersPastTime,
  listJobs,
  readLeasedJobs,
  readStatus,
  readStreamBacklog,
  readStuckHolders,
  WAITING_JOB_STATES,
  waitingState,
} from "./status/index.js";
export type {
  OutputFile,
  OutputFileProblems,
  SubmitMetrics,
  SubmitOutputRequest,
  SubmitOutputsOptions,
  SubmitResult,
  SubmitTrace,
} from "./submit/index.js";
export {
  assertOwnJobs,
  oversizedSubmission,
  parseOutputFile,
  parseSubmission,
  SUBMIT_HTTP_STATUS,
  submitOutput,
  submitOutputs,
  submitText,
} from "./submit/index.js";
export {
  assertConfigInvariants,
  checkRecordable,
  IDEM_KINDS,
  kindsOf,
  loadKinds,
  parseIdemConfig,
} from "./validate/index.js";
