import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { JournalStore } from "@idem/journal";
import { IdemError } from "@idem/schema";

/** A finished backup: where it is, its size, and how long the copy took. */
export interface BackupResult {
  file: string;
  bytes: number;
  ms: number;
}

/**
 * `idem backup FILE`: a consistent copy of the journal while it is in use, written beside FILE and
 * renamed over it once fsynced, so a crash never leaves a half copy under FILE (only a
 * `.FILE.partial-<pid>` that a later backup does not read). The journal is opened with `open` only
 * after FILE is found writable, and closed afterwards. Repeatable with `force`.
 * @throws INVALID_STATE when FILE exists and `force` is not set; NOT_FOUND when its folder does not
 * exist; whatever `open` throws; the store's errors while copying (the partial file is removed).
 */
export async function backupJournal(
  file: string,
  options: { force?: boolean; open: () => Promise<JournalStore> },
): Promise<BackupResult> {
  const target = resolve(file);
  if (existsSync(target) && !options.force) {
    throw new IdemError("INVALID_STATE", `${target} exists; pass --force to overwrite it`, {
      details: { file: target },
    });
  }
  const journal = await options.open();
  try {
    if (!existsSync(dirname(target))) {
      throw new IdemError("NOT_FOUND", `folder ${dirname(target)} does not exist`, {
        details: { folder: dirname(target) },
      });
    }
    const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
    const started = Date.now();
    try {
      await journal.maintenance.backup(partial);
      fsyncPath(partial);
      renameSync(partial, target);
      fsyncPath(dirname(target));
    } catch (e) {
      rmSync(partial, { force: true });
      throw e;
    }
    return { file: target, bytes: statSync(target).size, ms: Date.now() - started };
  } finally {
    await journal.close();
  }
}

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
