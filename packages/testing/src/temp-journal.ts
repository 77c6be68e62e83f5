import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type JournalStore, openSqliteJournal, type SqliteJournalOptions } from "@idem/journal";

/** A journal in a fresh temporary directory, closed and removed on disposal. */
export interface TempJournal extends AsyncDisposable {
  readonly journal: JournalStore;
  /** The journal file. */
  readonly path: string;
  /** The directory holding it. */
  readonly dir: string;
  /** Closes the journal and removes the directory; idempotent. */
  dispose(): Promise<void>;
}

/** Opens a new SQLite journal (migrations applied) under the OS temp dir, for `await using`. */
export async function tempJournal(options: SqliteJournalOptions = {}): Promise<TempJournal> {
  const dir = await mkdtemp(join(tmpdir(), "idem-journal-"));
  const path = join(dir, "journal.db");
  const journal = await openSqliteJournal(path, options);
  let done = false;
  const dispose = async () => {
    if (done) return;
    done = true;
    await journal.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  };
  return { journal, path, dir, dispose, [Symbol.asyncDispose]: dispose };
}
