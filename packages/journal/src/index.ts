export type {
  JournalCopyFaultPoint,
  JournalCopyOptions,
  JournalCopyProgress,
  JournalCopyReport,
  JournalCopyTableReport,
} from "./copy/index.js";
export { COPY_TABLES, copyJournal } from "./copy/index.js";
export { requestOf as approvalRequestOf } from "./domain/approvals.js";
export { DROPPED_BODY, REJECTED_BODIES_PER_JOB } from "./domain/decisions.js";
export type { JournalEventType } from "./domain/events.js";
export { deadLetterEvent, effectEvent, JOURNAL_EVENTS } from "./domain/events.js";
export { jobInput } from "./domain/job-input.js";
export { LOST_JOURNAL_ENTRY, missingJournal } from "./domain/missing-journal.js";
export { DAMAGED_OUTPUT_ENTRY, damageMessage } from "./domain/output-damage.js";
export type {
  ActiveRunState,
  EffectState,
  JobState,
  RunState,
  SettledEffectState,
} from "./domain/states.js";
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
} from "./domain/states.js";
export type { JournalStore } from "./journal-store.js";
export type { JournalLocation, OpenJournalStoreOptions } from "./open-journal-store.js";
export { openJournalStore } from "./open-journal-store.js";
export type { ActivityWindow, JournalActivity } from "./port/activity.js";
export { MAX_ACTIVITY_BUCKETS } from "./port/activity.js";
export type {
  ApprovalDecision,
  ApprovalRequest,
  AwaitingRun,
  JournalApprovals,
} from "./port/approvals.js";
export type { DeadLetterRecord, JournalDeadLetters } from "./port/dead-letters.js";
export type { WriteDurability } from "./port/durability.js";
export type { EventRecord, JournalEvents, NewEvent } from "./port/events.js";
export type {
  EnqueueResult,
  JobClaimResult,
  JobEntry,
  JobLease,
  JobRecord,
  JournalJobs,
} from "./port/jobs.js";
export type { HeldLeases, JournalLeaseHolders } from "./port/lease-holders.js";
export type {
  EffectRecord,
  EffectResolution,
  IntendInput,
  JournalLedger,
  LedgerEntry,
} from "./port/ledger.js";
export type {
  ArchivedOutput,
  JournalMaintenance,
  PruneOptions,
  PruneResult,
} from "./port/maintenance.js";
export type {
  DamagedOutput,
  JournalOutputs,
  ListFilter,
  OutputRecord,
  OutputSource,
  OutputSummary,
  OutputsPage,
  RecordOptions,
  RecordResult,
  RejectionRecord,
  ReplaySelection,
} from "./port/outputs.js";
export type {
  Claim,
  ClaimOptions,
  JournalRuns,
  LatestRun,
  Lease,
  RunRecord,
} from "./port/runs.js";
export type { JournalStatus } from "./port/status.js";
export type { JournalWakeUps, WorkKind } from "./port/work.js";
export type { PostgresJournalOptions } from "./store/postgres/postgres-journal-store.js";
export { PostgresJournalStore } from "./store/postgres/postgres-journal-store.js";
export type { JournalLockPlace } from "./store/sqlite/lock-places.js";
export { sqliteLockPlaces } from "./store/sqlite/lock-places.js";
export type { RestoreMarker } from "./store/sqlite/restore-files.js";
export {
  checkBackupFile,
  clearRestoreMarker,
  putBackupInPlace,
  readRestoreMarker,
  restoreMarkerOf,
} from "./store/sqlite/restore-files.js";
export type { SqliteJournalOptions } from "./store/sqlite/sqlite-journal-store.js";
export {
  openSqliteJournal,
  SqliteJournalStore,
  TRIGGERS,
} from "./store/sqlite/sqlite-journal-store.js";
export type { SqliteVersions } from "./store/sqlite/sqlite-versions.js";
export { sqliteVersions } from "./store/sqlite/sqlite-versions.js";
