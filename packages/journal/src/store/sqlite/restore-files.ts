import { randomBytes } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { IdemError } from "@idem/schema";
import Database from "better-sqlite3";
import { checkIdemSchema, checkJournalFile, damageMarkerOf } from "./journal-file.js";

// A SQLite journal restored from a backup (docs/runbook.md, "Restore a journal from a backup"):
// the journal in place is kept whole (with its WAL and marks) in a folder of its own, a copy of the
// backup is put in its place, and a marker beside it says where the kept journal is until
// everything it holds that the backup lacks is back (`idem journal recover`).

/** What a restore marker, `<journal>.restored`, holds. */
export interface RestoreMarker {
  /** When the backup was put in place, ISO-8601. */
  at: string;
  /** The backup file restored. */
  backup: string;
  /** The journal that was in place, kept; null when there was none (a lost disk). */
  kept: string | null;
}

/** The marker of a restore whose recovery is not done yet: `<journal>.restored`. */
export const restoreMarkerOf = (path: string): string => `${path}.restored`;

/** The marker of the restore of the journal at `path`, or undefined. Never throws. */
export function readRestoreMarker(path: string): RestoreMarker | undefined {
  const file = restoreMarkerOf(path);
  if (!existsSync(file)) return undefined;
  try {
    const m = JSON.parse(readFileSync(file, "utf8")) as Partial<RestoreMarker>;
    return {
      at: typeof m.at === "string" ? m.at : "(unknown time)",
      backup: typeof m.backup === "string" ? m.backup : "(unknown)",
      kept: typeof m.kept === "string" ? m.kept : null,
    };
  } catch {
    return { at: "(unreadable marker)", backup: "(unknown)", kept: null };
  }
}

/** Forgets a restore's marker: everything the kept journal held is back, or its loss accepted. */
export function clearRestoreMarker(path: string): void {
  rmSync(restoreMarkerOf(path), { force: true });
}

function fsyncPath(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    fsyncSync(fd);
  } catch {
    // A folder some file systems cannot fsync: as durable as they make it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Checks that `backup` is a whole idem journal: the SQLite header, idem's tables, and SQLite's
 * `integrity_check` passing.
 * @throws INTEGRITY naming what is wrong; IO when it cannot be read.
 */
export function checkBackupFile(backup: string): void {
  if (!existsSync(backup)) throw new IdemError("NOT_FOUND", `no backup at ${backup}`);
  checkJournalFile(backup, false);
  const db = new Database(backup, { readonly: true, fileMustExist: true });
  try {
    checkIdemSchema(db, backup);
    const rows = db.pragma("integrity_check") as { integrity_check: string }[];
    const bad = rows.map((r) => r.integrity_check).filter((r) => r !== "ok");
    if (bad.length > 0)
      throw new IdemError(
        "INTEGRITY",
        `the backup ${backup} failed its integrity check (${bad.slice(0, 3).join("; ")}): restore an older one`,
      );
  } finally {
    db.close();
  }
}

/** Writes a restore marker whole (a temporary file renamed over it, fsynced). */
function writeRestoreMarker(path: string, marker: RestoreMarker): void {
  const tmp = `${restoreMarkerOf(path)}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(marker, null, 2)}\n`);
  fsyncPath(tmp);
  renameSync(tmp, restoreMarkerOf(path));
  fsyncPath(dirname(path));
}

/**
 * Puts a copy of `backup` in place of the journal at `path`. First `<journal>.restored` records
 * where the journal in place is kept; then that journal (with its `-wal`, `-shm` and damage mark)
 * is moved, whole, into `keptDir` (its WAL's commits stay with it); then the copy is made aside,
 * fsynced and renamed into place. Interrupted anywhere, it is run again: with the marker there and
 * no journal in place, it goes on where it stopped (the kept journal stays the one recorded).
 * @throws INVALID_STATE when a restore's journal is in place and its recovery is not done yet
 * (`idem journal recover` first); the file system's errors.
 */
export function putBackupInPlace(
  path: string,
  backup: string,
  keptDir: string,
  now: number,
): RestoreMarker {
  const earlier = readRestoreMarker(path);
  // Done already: the copy is in place (the journal kept, or none was there to keep).
  const done = earlier && existsSync(path) && (earlier.kept === null || existsSync(earlier.kept));
  if (done)
    throw new IdemError(
      "INVALID_STATE",
      `${path} was restored from ${earlier.backup} at ${earlier.at} and what ${earlier.kept ?? "the lost journal"} holds is not back yet: run idem journal recover first (or remove ${restoreMarkerOf(path)} to accept its loss)`,
    );
  let kept = earlier?.kept ?? null;
  if (!earlier && existsSync(path)) kept = join(keptDir, basename(path));
  if (kept !== null) mkdirSync(dirname(kept), { recursive: true });
  const marker: RestoreMarker = { at: new Date(now).toISOString(), backup, kept };
  writeRestoreMarker(path, marker);
  if (kept !== null && existsSync(path)) {
    for (const suffix of ["-wal", "-shm"]) {
      if (existsSync(`${path}${suffix}`)) renameSync(`${path}${suffix}`, `${kept}${suffix}`);
    }
    if (existsSync(damageMarkerOf(path))) renameSync(damageMarkerOf(path), damageMarkerOf(kept));
    renameSync(path, kept);
    fsyncPath(dirname(kept));
  }
  // What the journal in place left (a WAL without its file) would be replayed into the copy.
  for (const suffix of ["-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  const tmp = `${path}.restore-${randomBytes(6).toString("hex")}`;
  try {
    copyFileSync(backup, tmp);
    fsyncPath(tmp);
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
  fsyncPath(dirname(path));
  return marker;
}
