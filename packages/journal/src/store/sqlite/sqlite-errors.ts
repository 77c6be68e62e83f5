import { type ErrorCode, IdemError } from "@idem/schema";

/**
 * SQLite's result codes idem names, by primary code (an extended code such as SQLITE_BUSY_RECOVERY
 * or SQLITE_IOERR_FSYNC is its primary's), and the IdemError code each becomes. The failure
 * classes are those `classifyError` gave the raw codes before: a lock or an I/O error transient,
 * a full disk infrastructure, a damaged file or a refused integrity constraint logic.
 */
const SQLITE_CODES: readonly (readonly [primary: string, code: ErrorCode])[] = [
  ["SQLITE_BUSY", "LOCKED"],
  ["SQLITE_LOCKED", "LOCKED"],
  ["SQLITE_FULL", "DISK_FULL"],
  ["SQLITE_IOERR", "IO"],
  ["SQLITE_READONLY", "IO"],
  ["SQLITE_CANTOPEN", "IO"],
  ["SQLITE_CORRUPT", "INTEGRITY"],
  ["SQLITE_NOTADB", "INTEGRITY"],
  // An integrity constraint (a trigger keeping outputs immutable, a unique or foreign key) refused
  // a write: the adapter's own statements never ask for one, so the journal's rules are broken.
  ["SQLITE_CONSTRAINT", "INTEGRITY"],
];

/** The IdemError code of a SQLite result code (`SQLITE_FULL`, `SQLITE_BUSY_RECOVERY`), if idem names it. */
export function idemCodeOfSqlite(sqliteCode: string): ErrorCode | undefined {
  for (const [primary, code] of SQLITE_CODES) {
    if (sqliteCode === primary || sqliteCode.startsWith(`${primary}_`)) return code;
  }
  return undefined;
}

/**
 * A better-sqlite3 error as the IdemError of its code (see SQLITE_CODES), with the original as
 * `cause` and its code in the message and `details.sqlite`; anything else (an IdemError, a
 * TypeError of a closed handle, a SQLite code idem does not name) as it is. Pure; never throws.
 */
export function asJournalError(e: unknown): unknown {
  if (!(e instanceof Error) || e.name !== "SqliteError") return e;
  const sqlite = (e as { code?: unknown }).code;
  if (typeof sqlite !== "string") return e;
  const code = idemCodeOfSqlite(sqlite);
  if (code === undefined) return e;
  return new IdemError(code, `${e.message} (${sqlite})`, { cause: e, details: { sqlite } });
}

/**
 * `concern` with every method wrapped so that what it throws or rejects with leaves as
 * {@link asJournalError} says: the SQLite adapter's boundary, so callers branch on idem's codes
 * and never on SQLite's. The wrapped methods keep `this` and their results.
 */
export function withJournalErrors<T extends object>(concern: T): T {
  const rethrow = (e: unknown): never => {
    throw asJournalError(e);
  };
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(concern)) {
    if (typeof value !== "function") {
      wrapped[name] = value;
      continue;
    }
    const method = value as (...args: unknown[]) => unknown;
    wrapped[name] = (...args: unknown[]) => {
      let result: unknown;
      try {
        result = method.apply(concern, args);
      } catch (e) {
        rethrow(e);
      }
      return result instanceof Promise ? result.catch(rethrow) : result;
    };
  }
  return wrapped as T;
}
