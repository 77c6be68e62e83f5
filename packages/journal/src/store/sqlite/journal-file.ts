import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname } from "node:path";
import { IdemError } from "@idem/schema";
import Database from "better-sqlite3";
import { migrate } from "./migrate.js";

// What makes a file at journal.path idem's journal, and what refuses it when it is not (issue 31,
// docs/runbook.md "A damaged journal"): a journal is made whole in a file of its own and linked
// into place, so a file at the path is never a journal being made; one that is empty, is not a
// SQLite database, lacks idem's tables, or was found damaged (a marker beside it) is refused.

/** The runbook entry every refusal names. */
export const DAMAGED_JOURNAL_ENTRY = 'docs/runbook.md, "A damaged journal"';
/** The 16 bytes every SQLite database file starts with. */
const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");
/** Tables only an idem journal has, with the migration history that made them. */
const IDEM_TABLES = ["__drizzle_migrations", "outputs", "runs", "effects", "events"];

/** Where the damage found in a journal is kept: a file beside it, `<journal>.damaged`. */
export const damageMarkerOf = (path: string): string => `${path}.damaged`;

/** What a damage marker holds. */
export interface JournalDamage {
  at: string;
  findings: string[];
}

const refuse = (path: string, what: string, details: Record<string, unknown> = {}) =>
  new IdemError(
    "INTEGRITY",
    `the journal ${path} ${what}; idem will not use it. See ${DAMAGED_JOURNAL_ENTRY}`,
    { details: { path, ...details } },
  );

/** Whether SQLite said the file is damaged (SQLITE_CORRUPT and its extended codes, SQLITE_NOTADB). */
export function isDamageError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return (
    typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB")
  );
}

/** SQLite's "the file is damaged" met while opening, as the refusal of a damaged journal. */
export function damagedOnOpen(e: unknown, path: string): unknown {
  if (!isDamageError(e)) return e;
  return new IdemError(
    "INTEGRITY",
    `the journal ${path} is damaged (${(e as Error).message}); idem will not use it. See ${DAMAGED_JOURNAL_ENTRY}`,
    { cause: e, details: { path, reason: "corrupt" } },
  );
}

/** The damage recorded for this journal, or undefined. Never throws for an unreadable marker. */
export function damageOf(path: string): JournalDamage | undefined {
  const marker = damageMarkerOf(path);
  if (!existsSync(marker)) return undefined;
  try {
    const d = JSON.parse(readFileSync(marker, "utf8")) as Partial<JournalDamage>;
    return {
      at: typeof d.at === "string" ? d.at : "(unknown time)",
      findings: Array.isArray(d.findings) ? d.findings.map(String) : [],
    };
  } catch {
    return { at: "(unreadable marker)", findings: [] };
  }
}

/**
 * Records that this journal failed its integrity check, so that every later open refuses it until
 * `idem doctor` finds it sound again (or it is replaced: see the runbook). Written whole (a
 * temporary file renamed over it).
 */
export function markDamaged(path: string, findings: readonly string[], now: number): void {
  const marker = damageMarkerOf(path);
  const tmp = `${marker}.${randomBytes(6).toString("hex")}.tmp`;
  const damage: JournalDamage = { at: new Date(now).toISOString(), findings: [...findings] };
  writeFileSync(tmp, `${JSON.stringify(damage, null, 2)}\n`);
  renameSync(tmp, marker);
}

/** Forgets the recorded damage (the journal passed its integrity check). */
export function clearDamage(path: string): void {
  rmSync(damageMarkerOf(path), { force: true });
}

/**
 * Refuses a file that cannot be an idem journal before SQLite opens it (which would take an empty
 * file for a new database): empty (0 bytes: truncated), too short or without the SQLite header
 * (not a SQLite database), or marked damaged (unless `allowDamaged`).
 * @throws INTEGRITY naming the file, what is wrong and the runbook entry.
 */
export function checkJournalFile(path: string, allowDamaged: boolean): void {
  const size = statSync(path).size;
  if (size === 0)
    throw refuse(path, "is empty (0 bytes), not a new journal: it was truncated or never made", {
      reason: "empty",
    });
  const head = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(path, "r");
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  if (size < 512 || !head.equals(SQLITE_HEADER))
    throw refuse(path, "is not a SQLite database, so not an idem journal", {
      reason: "not-sqlite",
    });
  const damage = allowDamaged ? undefined : damageOf(path);
  if (damage)
    throw refuse(
      path,
      `failed its integrity check (${damage.findings[0] ?? "see the marker"}; recorded ${damage.at} in ${basename(damageMarkerOf(path))})`,
      { reason: "damaged", findings: damage.findings },
    );
}

/**
 * Refuses an open SQLite database that idem did not make: one without idem's tables and their
 * migration history (another program's database, or one whose tables were dropped).
 * @throws INTEGRITY naming the file and the runbook entry.
 */
export function checkIdemSchema(db: Database.Database, path: string): void {
  const names = new Set(
    (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
    ).map((r) => r.name),
  );
  const missing = IDEM_TABLES.filter((t) => !names.has(t));
  if (missing.length > 0)
    throw refuse(path, `is not an idem journal (no ${missing.join(", ")} table)`, {
      reason: "not-idem",
      missing,
    });
}

/**
 * Makes a new journal at `path` whole before anyone can see it: created and migrated in a file of
 * its own beside it (WAL mode, checkpointed and closed), fsynced, then hard-linked to `path`,
 * which fails when another process linked its own first (that one is kept, this one dropped). So
 * an empty file at the path is never a journal in the making, and is refused. A file system
 * without hard links falls back to a rename when the path is still free. The file is mode 0600
 * (its -wal and -shm follow it).
 */
export function createJournalFile(path: string, migrationsFolder: string): void {
  const tmp = `${path}.new-${process.pid}-${randomBytes(6).toString("hex")}`;
  try {
    // Readable by its owner only (whatever the umask): SQLite gives its -wal and -shm files the
    // database file's mode, and an empty file is a new database to it.
    closeSync(openSync(tmp, "wx", 0o600));
    chmodSync(tmp, 0o600);
    const db = new Database(tmp);
    try {
      db.pragma("journal_mode = WAL");
      db.pragma("foreign_keys = ON");
      migrate(db, migrationsFolder);
      db.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      db.close();
    }
    const fd = openSync(tmp, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST") return; // another process made it first: its journal is the one
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EXDEV") throw e;
      if (!existsSync(path)) renameSync(tmp, path);
    }
    fsyncDir(dirname(path));
  } finally {
    for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`]) rmSync(f, { force: true });
  }
}

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some file systems cannot fsync a directory; the link itself is then as durable as they make it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
