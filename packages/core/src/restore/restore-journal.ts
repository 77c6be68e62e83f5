import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  checkBackupFile,
  clearRestoreMarker,
  type JournalStore,
  openJournalStore,
  putBackupInPlace,
  type RestoreMarker,
  readRestoreMarker,
} from "@idem/journal";
import { type Config, IdemError, journalLocationOf } from "@idem/schema";
import { journalLockHolders } from "../status/stuck-holders.js";
import {
  type RecoverJournalOptions,
  type RecoveryReport,
  recoverJournal,
} from "./recover-journal.js";

/** What `restoreJournal` did. */
export interface RestoreResult {
  journal: string;
  backup: string;
  /** Where the journal that was in place is kept; null when there was none. */
  kept: string | null;
  /** What came back from the kept journal (see `recoverFrom`). */
  recovery: RecoveryReport | null;
}

/** The SQLite journal's path, refusing a PostgreSQL one (restored with pg_restore). */
function sqlitePath(config: Config): string {
  const at = journalLocationOf(config);
  if ("url" in at)
    throw new IdemError(
      "INVALID_STATE",
      "the journal is on PostgreSQL: restore it with pg_restore (docs/runbook.md, A damaged journal); idem journal recover --from FILE still brings back what a SQLite journal holds",
    );
  return at.path;
}

/** `2026-05-01T02:00:00.000Z` as `20260501T020000Z`, a folder name. */
const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, "");

/**
 * Refuses while a process still uses the journal: a run or job lease that has not ended, or its
 * write lock held. A restore under a running interpreter would have it write into the kept file.
 * @throws INVALID_STATE naming the holders.
 */
async function refuseWhileUsed(config: Config, path: string, now: number): Promise<void> {
  const locks = journalLockHolders(config, { any: true });
  if (locks.length > 0)
    throw new IdemError(
      "INVALID_STATE",
      `stop idem first: ${locks.map((h) => h.finding).join("; ")}`,
    );
  if (!existsSync(path)) return;
  let journal: JournalStore;
  try {
    journal = await openJournalStore({ path }, { readonly: true, allowDamaged: true });
  } catch {
    return; // too damaged to open: nothing can be using it
  }
  try {
    const held = [...(await journal.runs.heldLeases()), ...(await journal.jobs.heldLeases())];
    const live = held.filter((h) => h.firstUntil > now);
    if (live.length > 0)
      throw new IdemError(
        "INVALID_STATE",
        `stop idem first: ${live.map((h) => `${h.owner} holds ${h.count} lease(s) until ${new Date(h.firstUntil).toISOString()}`).join("; ")} (a lease whose process is gone ends by itself then)`,
      );
  } catch (e) {
    if (e instanceof IdemError && e.code === "INVALID_STATE") throw e;
  } finally {
    await journal.close();
  }
}

/**
 * Restores the config's SQLite journal from `backup` (docs/runbook.md, "Restore a journal from a
 * backup"): checks the backup (an idem journal passing `integrity_check`), refuses while a process
 * uses the journal, keeps the journal in place whole under `<journal folder>/broken/<time>/`, puts a
 * copy of the backup in its place, then brings back from the kept journal what it holds and the
 * backup lacks (`recoverFrom`). Until that is whole, `<journal>.restored` says so, and `idem jobs`
 * and `idem audit` name it.
 * @throws INVALID_STATE (PostgreSQL; a process using the journal; a restore whose recovery is not
 * done), NOT_FOUND / INTEGRITY for the backup.
 */
export async function restoreJournal(
  config: Config,
  backup: string,
  options: RecoverJournalOptions & { now?: number } = {},
): Promise<RestoreResult> {
  const path = sqlitePath(config);
  const file = resolve(backup);
  if (file === resolve(path))
    throw new IdemError("INVALID_STATE", "the backup file is the journal itself");
  checkBackupFile(file);
  const now = options.now ?? Date.now();
  await refuseWhileUsed(config, path, now);
  const marker = putBackupInPlace(path, file, join(dirname(path), "broken", stamp(now)), now);
  const recovery =
    marker.kept === null ? null : (await recoverFrom(config, marker.kept, options)).report;
  return { journal: path, backup: file, kept: marker.kept, recovery };
}

/**
 * Brings back into the config's journal what the journal at `from` holds and it lacks
 * (`recoverJournal`); `from` defaults to the journal a restore kept (`<journal>.restored`). The
 * source is opened read-only, damaged or not; one that does not open at all is reported unreadable.
 * When the recovery from a restore's kept journal is complete, the restore's marker is removed.
 * @throws NOT_FOUND when there is nothing to recover from; the target journal's errors.
 */
export async function recoverFrom(
  config: Config,
  from: string | undefined,
  options: RecoverJournalOptions = {},
): Promise<{ from: string; report: RecoveryReport; marker: RestoreMarker | undefined }> {
  const at = journalLocationOf(config);
  const marker = "path" in at ? readRestoreMarker(at.path) : undefined;
  const source = from ?? marker?.kept ?? undefined;
  if (source === undefined)
    throw new IdemError(
      "NOT_FOUND",
      marker
        ? `the restore of ${marker.at} kept no journal (none was in place): nothing to recover from; give --from FILE, or idem journal recover --accept-loss`
        : "no restore to recover from: give --from FILE (a journal to bring back outputs and jobs from)",
    );
  const target = await openJournalStore(at, { synchronous: config.journal.synchronous });
  try {
    const r = await recoverFromFile(target, source, config, options);
    const restored =
      marker !== undefined && "path" in at && resolve(source) === resolve(marker.kept ?? "");
    if (r.complete && restored && !options.dryRun) clearRestoreMarker(at.path);
    return { from: source, report: r, marker };
  } finally {
    await target.close();
  }
}

/** `recoverJournal` from the journal file `source`, opened read-only; one that does not open is unreadable. */
async function recoverFromFile(
  target: JournalStore,
  source: string,
  config: Config,
  options: RecoverJournalOptions,
): Promise<RecoveryReport> {
  let opened: JournalStore;
  try {
    opened = await openJournalStore({ path: source }, { readonly: true, allowDamaged: true });
  } catch (e) {
    return unreadableReport(`cannot open ${source}: ${(e as Error).message}`);
  }
  try {
    return await recoverJournal(target, opened, config, options);
  } finally {
    await opened.close();
  }
}

function unreadableReport(why: string): RecoveryReport {
  return {
    outputs: { recorded: [], present: 0, conflicts: [], invalid: [] },
    jobs: { enqueued: [], present: 0, answered: 0, conflicts: [], invalid: [] },
    deadLettered: [],
    unreadable: [why],
    complete: false,
  };
}

/** What a restore still lacks, as `idem jobs` and `idem audit` say it until it is done. */
export interface PendingRestore extends RestoreMarker {
  /** What the kept journal holds that the journal lacks (a dry run); null when there is none. */
  missing: RecoveryReport | null;
  /** What to do, in a sentence. */
  fix: string;
}

/**
 * The restore of the config's journal whose recovery is not done (`<journal>.restored` is there),
 * with what the kept journal holds that `journal` lacks; undefined when there is none. Read-only.
 */
export async function pendingRestore(
  config: Config,
  journal: JournalStore,
): Promise<PendingRestore | undefined> {
  const at = journalLocationOf(config);
  if ("url" in at) return undefined;
  const marker = readRestoreMarker(at.path);
  if (!marker) return undefined;
  const missing =
    marker.kept !== null && existsSync(marker.kept)
      ? await recoverFromFile(journal, marker.kept, config, { dryRun: true })
      : null;
  const fix =
    missing === null || missing.unreadable.length > 0
      ? `the journal kept at ${marker.kept ?? "(none)"} cannot be read${missing ? ` whole (${missing.unreadable.join("; ")})` : ""}: jobs enqueued after the backup may be lost; enqueue them again from where they came from (same job IDs), then idem journal recover --accept-loss`
      : missing.complete
        ? "nothing is missing: idem journal recover ends this notice"
        : "bring them back: idem journal recover";
  return { ...marker, missing, fix };
}

/** Forgets a restore's marker: its loss accepted (what could not be brought back is gone). */
export function acceptRestoreLoss(config: Config): RestoreMarker | undefined {
  const path = sqlitePath(config);
  const marker = readRestoreMarker(path);
  clearRestoreMarker(path);
  return marker;
}
