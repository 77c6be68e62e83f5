export type {
  RecoverJournalOptions,
  RecoveryReport,
} from "./recover-journal.js";
export { recoverJournal } from "./recover-journal.js";
export type { PendingRestore, RestoreResult } from "./restore-journal.js";
export {
  acceptRestoreLoss,
  pendingRestore,
  recoverFrom,
  restoreJournal,
} from "./restore-journal.js";
