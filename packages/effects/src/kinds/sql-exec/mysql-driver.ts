// sql.exec's MySQL and MariaDB adapter over mysql2, imported when a mysql target is first used.
import type { Pool, PoolConnection } from "mysql2/promise";
import type {
  SqlConnectOptions,
  SqlDriver,
  SqlFailureKind,
  SqlResult,
  SqlSession,
} from "./sql-driver.js";

/** Server error numbers by what sql.exec does about them (see SqlFailureKind). */
const TRANSIENT = new Set([
  1040, 1053, 1205, 1213, 1317, 1615, 1927, 1969, 2002, 2003, 2006, 2013, 3024, 4031,
]);
const DATA = new Set([1048, 1264, 1265, 1292, 1366, 1367, 1406, 1411, 1690, 3140]);
const CONFIG = new Set([
  1044, 1045, 1049, 1054, 1064, 1136, 1142, 1143, 1149, 1210, 1227, 1290, 1295,
]);
/** Client-side codes of a connection that failed or was lost. */
const CLIENT_TRANSIENT = new Set([
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ENOTFOUND",
]);

/** What sql.exec does with a mysql2 error (see SqlFailureKind). Pure. */
export function classifyMysql(e: unknown): SqlFailureKind {
  const err = (e ?? {}) as { errno?: unknown; code?: unknown; sqlState?: unknown; fatal?: unknown };
  const errno = typeof err.errno === "number" ? err.errno : undefined;
  const state = typeof err.sqlState === "string" ? err.sqlState : undefined;
  if (errno === 1062) return "unique";
  if (errno === 1146) return "missing-table";
  if (typeof err.code === "string" && CLIENT_TRANSIENT.has(err.code)) return "transient";
  if (errno !== undefined && state !== undefined) {
    if (TRANSIENT.has(errno)) return "transient";
    if (DATA.has(errno)) return "data";
    if (CONFIG.has(errno)) return "config";
    const cls = state.slice(0, 2);
    if (cls === "08" || cls === "40") return "transient";
    if (cls === "22") return "data";
    if (cls === "42" || cls === "28") return "config";
    return "conflict";
  }
  return "transient";
}

let loaded: typeof import("mysql2/promise") | undefined;

/** The connection settings of a `mysql://` or `mariadb://` URL (`?socketPath=` for a socket). */
function connection(url: string) {
  const u = new URL(url);
  const socketPath = u.searchParams.get("socketPath");
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, "$1") || "localhost",
    port: u.port === "" ? 3306 : Number(u.port),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.replace(/^\//, "")) || undefined,
    ...(socketPath ? { socketPath } : {}),
  };
}

const asResult = (r: unknown): SqlResult =>
  Array.isArray(r)
    ? { rows: r as Record<string, unknown>[], rowCount: r.length }
    : { rows: [], rowCount: (r as { affectedRows?: number }).affectedRows ?? 0 };

/**
 * A pool of connections to a MySQL or MariaDB target: statements prepared at the server with
 * their values bound (mysql2's execute), DATETIME read as text, each session in UTC with its lock
 * waits bounded by the target's timeout. Loads mysql2 on the first call.
 */
export async function openMysql(o: SqlConnectOptions): Promise<SqlDriver> {
  loaded ??= (await import("mysql2/promise")).default;
  const pool: Pool = loaded.createPool({
    ...connection(o.url),
    connectionLimit: o.poolSize,
    maxIdle: o.poolSize,
    idleTimeout: 30_000,
    connectTimeout: o.timeoutMs,
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    multipleStatements: false,
    enableKeepAlive: true,
  });
  const lockWait = Math.max(1, Math.ceil(o.timeoutMs / 1000));
  const ready = new WeakSet<object>();
  const timeout = 2 * o.timeoutMs;
  const run = async (c: Pool | PoolConnection, sql: string, values: readonly unknown[]) =>
    asResult(
      values.length === 0
        ? (await c.query({ sql, timeout }))[0]
        : (await c.execute({ sql, timeout, values: [...values] as never }))[0],
    );
  return {
    dialect: "mysql",
    async session(): Promise<SqlSession> {
      const conn = await pool.getConnection();
      const core = (conn as unknown as { connection: object }).connection;
      if (!ready.has(core)) {
        try {
          await conn.query(`SET time_zone = '+00:00', innodb_lock_wait_timeout = ${lockWait}`);
        } catch (e) {
          conn.destroy();
          throw e;
        }
        ready.add(core);
      }
      return {
        query: (sql, values = []) => run(conn, sql, values),
        begin: async () => {
          await run(conn, "START TRANSACTION", []);
        },
        async parameterCount(sql) {
          const stmt = await conn.prepare(sql);
          const n = (stmt as unknown as { statement: { parameters: unknown[] } }).statement
            .parameters.length;
          conn.unprepare(sql);
          return n;
        },
        release: (broken) => (broken ? conn.destroy() : conn.release()),
      };
    },
    query: (sql, values = []) => run(pool, sql, values),
    classify: classifyMysql,
    codeOf(e) {
      const err = (e ?? {}) as { errno?: unknown; code?: unknown };
      if (typeof err.code === "string")
        return typeof err.errno === "number" ? `${err.code} (${err.errno})` : err.code;
      return undefined;
    },
    end: () => pool.end(),
  };
}
