export { ArchiveWriter } from "./archive-writer.js";
export type { BackupResult } from "./backup-journal.js";
export { backupJournal } from "./backup-journal.js";
export { findInArchive } from "./find-in-archive.js";
export type { PruneReport } from "./prune-journal.js";
export { pruneCutoff, pruneJournal } from "./prune-journal.js";
