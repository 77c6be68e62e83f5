// The small port sql.exec's transaction talks to, and the SQL of idem's key table in each dialect.
// The adapters (postgres-driver.ts, mysql-driver.ts) import their driver when a target is first
// used, so nothing loads pg or mysql2 in a process that has no sql target.

/** The databases sql.exec speaks to. */
export type SqlDialect = "postgres" | "mysql";

/** What one query answered: its rows (a SELECT) and the rows it changed or returned. */
export interface SqlResult {
  rows: Record<string, unknown>[];
  rowCount: number;
}

/** One connection checked out of the pool, for a transaction or doctor's prepares. */
export interface SqlSession {
  /** One statement with bound parameters (never interpolated into the SQL). */
  query(sql: string, values?: readonly unknown[]): Promise<SqlResult>;
  /** Starts a transaction, bounded by the target's timeout, in UTC. */
  begin(): Promise<void>;
  /** The number of parameters the server finds in `sql`: prepared and described, never run. */
  parameterCount(sql: string): Promise<number>;
  /** Back to the pool; `broken`: closed instead (its transaction state is unknown). */
  release(broken: boolean): void;
}

/**
 * What sql.exec does with an error, decided by the driver's codes:
 * - `unique`: a unique violation (the caller knows whether it was the key row's);
 * - `missing-table`: the table does not exist;
 * - `transient`: the server is unreachable, restarting, timed out, a deadlock or a serialization
 *   failure, the connection lost: try again (the probe tells whether a COMMIT took);
 * - `conflict`: the target's data refuses the statement (a constraint);
 * - `data`: a value the column cannot take (out of range, too long, malformed);
 * - `config`: the statement or the connection settings are wrong (syntax, a missing table or
 *   column, a privilege, authentication, a database that does not exist).
 */
export type SqlFailureKind =
  | "unique"
  | "missing-table"
  | "transient"
  | "conflict"
  | "data"
  | "config";

/** A pool of connections to one target. */
export interface SqlDriver {
  readonly dialect: SqlDialect;
  /** A connection of its own (a transaction). */
  session(): Promise<SqlSession>;
  /** One query on any pooled connection, in a transaction of its own (a probe, a scan). */
  query(sql: string, values?: readonly unknown[]): Promise<SqlResult>;
  classify(e: unknown): SqlFailureKind;
  /** The driver's code of an error (a SQLSTATE, an errno, Node's code), for messages. */
  codeOf(e: unknown): string | undefined;
  end(): Promise<void>;
}

/** How an adapter connects: the URL (credentials included, never shown) and the target's bounds. */
export interface SqlConnectOptions {
  url: string;
  poolSize: number;
  timeoutMs: number;
}

/** The statements sql.exec runs on idem's key table, in one dialect. */
export interface KeyTableSql {
  create: string;
  /** Reads the table's columns and nothing else: fails when it is missing or not idem's. */
  shape: string;
  insert: string;
  select: string;
  selectAll: string;
}

/** A `table` or `schema.table` name quoted for the dialect (each part an identifier already). */
export function quoteTable(dialect: SqlDialect, table: string): string {
  const q = dialect === "postgres" ? '"' : "`";
  return table
    .split(".")
    .map((p) => `${q}${p}${q}`)
    .join(".");
}

/**
 * The key table's SQL: one row per effect applied at the target, `effect_key` its primary key
 * (ASCII, case-sensitive: keys are `<jobId>/<index>`, at most 135 characters) and `applied_at`,
 * idem's clock when the transaction ran, in UTC. MySQL's is InnoDB: transactional, as it must be.
 */
export function keyTableSql(dialect: SqlDialect, table: string): KeyTableSql {
  const t = quoteTable(dialect, table);
  if (dialect === "postgres")
    return {
      create: `CREATE TABLE IF NOT EXISTS ${t} (effect_key varchar(256) PRIMARY KEY, applied_at timestamptz NOT NULL)`,
      shape: `SELECT effect_key, applied_at FROM ${t} WHERE false`,
      insert: `INSERT INTO ${t} (effect_key, applied_at) VALUES ($1, $2)`,
      select: `SELECT applied_at FROM ${t} WHERE effect_key = $1`,
      selectAll: `SELECT effect_key FROM ${t}`,
    };
  return {
    create: `CREATE TABLE IF NOT EXISTS ${t} (effect_key VARCHAR(256) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, applied_at DATETIME(3) NOT NULL) ENGINE=InnoDB`,
    shape: `SELECT effect_key, applied_at FROM ${t} WHERE 1 = 0`,
    insert: `INSERT INTO ${t} (effect_key, applied_at) VALUES (?, ?)`,
    select: `SELECT applied_at FROM ${t} WHERE effect_key = ?`,
    selectAll: `SELECT effect_key FROM ${t}`,
  };
}

/** A time (ms) as the key table stores it: ISO 8601 for PostgreSQL, MySQL's DATETIME text. */
export function storedTime(dialect: SqlDialect, ms: number): string {
  const iso = new Date(ms).toISOString();
  return dialect === "postgres" ? iso : iso.replace("T", " ").replace("Z", "");
}

/** `applied_at` as read back (a Date from pg, DATETIME text from mysql2), as ISO 8601 UTC. */
export function readTime(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "string") {
    const ms = Date.parse(
      /[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(" ", "T")}Z`,
    );
    return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
  }
  return undefined;
}
