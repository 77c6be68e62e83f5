export type {
  JournalCopyFaultPoint,
  JournalCopyOptions,
  JournalCopyProgress,
  JournalCopyReport,
  JournalCopyTableReport,
} from "./copy-journal.js";
export { copyJournal } from "./copy-journal.js";
export { COPY_TABLES } from "./tables.js";
