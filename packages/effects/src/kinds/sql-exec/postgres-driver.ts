// sql.exec's PostgreSQL adapter over node-postgres, imported when a postgres target is first used
// (test/architecture/import-rules.ts allows pg here and in the journal only).
import type pg from "pg";
import type { SqlConnectOptions, SqlDriver, SqlFailureKind, SqlSession } from "./sql-driver.js";

/** Node's codes of a connection that failed or was lost: the server may come back. */
const NODE_TRANSIENT = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ENOTFOUND",
]);

/** SQLSTATE classes (the first two characters) by what sql.exec does about them. */
const TRANSIENT_CLASSES = new Set(["08", "40", "53", "57", "58", "XX"]);
const CONFIG_CLASSES = new Set(["0A", "25", "28", "2B", "3D", "3F", "42", "44"]);

function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** What sql.exec does with a node-postgres error (see SqlFailureKind). Pure. */
export function classifyPostgres(e: unknown): SqlFailureKind {
  const state = sqlState(e);
  if (state !== undefined) {
    if (state === "23505") return "unique";
    if (state === "42P01") return "missing-table";
    // NULL for a NOT NULL column: the value the agent gave, as MySQL's 1048.
    if (state === "23502") return "data";
    if (state === "55P03" || state === "55006") return "transient";
    const cls = state.slice(0, 2);
    if (TRANSIENT_CLASSES.has(cls)) return "transient";
    if (CONFIG_CLASSES.has(cls)) return "config";
    if (cls === "22") return "data";
    return "conflict";
  }
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string" && NODE_TRANSIENT.has(code)) return "transient";
  // pg's own errors carry no code: a password it cannot send is the config's.
  if (/password|SASL|SCRAM|authentication/i.test((e as Error)?.message ?? "")) return "config";
  return "transient";
}

let loaded: typeof pg | undefined;

/**
 * A pool of connections to a PostgreSQL target: sessions in UTC, each statement bounded at the
 * server (`statement_timeout`, a lock wait included) and at the client (twice that, then the
 * connection is dropped). Loads pg on the first call.
 */
export async function openPostgres(o: SqlConnectOptions): Promise<SqlDriver> {
  loaded ??= (await import("pg")).default;
  const pool = new loaded.Pool({
    connectionString: o.url,
    max: o.poolSize,
    connectionTimeoutMillis: o.timeoutMs,
    statement_timeout: o.timeoutMs,
    query_timeout: 2 * o.timeoutMs,
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
    application_name: "idem",
    options: "-c TimeZone=UTC",
    keepAlive: true,
  });
  // An idle connection losing its server is told here; the next checkout connects again.
  pool.on("error", () => {});
  const asResult = (r: pg.QueryResult) => ({ rows: r.rows, rowCount: r.rowCount ?? 0 });
  return {
    dialect: "postgres",
    async session(): Promise<SqlSession> {
      const client = await pool.connect();
      return {
        query: async (sql, values = []) => asResult(await client.query(sql, [...values])),
        async parameterCount(sql) {
          await client.query(`PREPARE idem_doctor AS ${sql}`);
          try {
            const r = await client.query<{ n: number | null }>(
              "SELECT cardinality(parameter_types) AS n FROM pg_prepared_statements WHERE name = 'idem_doctor'",
            );
            return r.rows[0]?.n ?? 0;
          } finally {
            await client.query("DEALLOCATE idem_doctor");
          }
        },
        release: (broken) =>
          client.release(broken ? new Error("sql.exec: connection dropped") : undefined),
      };
    },
    query: async (sql, values = []) => asResult(await pool.query(sql, [...values])),
    classify: classifyPostgres,
    codeOf: (e) => sqlState(e) ?? ((e as { code?: unknown } | null)?.code as string | undefined),
    end: () => pool.end(),
  };
}
