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
 * One statement over the extended protocol (Parse, Bind, Execute), parameters or none: the server
 * refuses a text holding several (`...; COMMIT; ...` fails rather than ends idem's transaction),
 * which the simple protocol, pg's choice for a query without values, would run one after another.
 */
const extended = (text: string, values: readonly unknown[] = []): pg.QueryConfig =>
  // pg reads queryMode (8.11+); @types/pg does not name it yet.
  ({ text, values: [...values], queryMode: "extended" }) as pg.QueryConfig;

/**
 * A pool of connections to a PostgreSQL target, fit for PgBouncer in transaction pooling: no
 * startup parameter but `application_name` (PgBouncer refuses others), no session state; each
 * transaction sets its own `statement_timeout` (a lock wait included) and UTC with SET LOCAL, and
 * the client drops a connection after twice that. Every statement goes over the extended protocol
 * (`extended`). Loads pg on the first call.
 */
export async function openPostgres(o: SqlConnectOptions): Promise<SqlDriver> {
  loaded ??= (await import("pg")).default;
  const pool = new loaded.Pool({
    connectionString: o.url,
    max: o.poolSize,
    connectionTimeoutMillis: o.timeoutMs,
    query_timeout: 2 * o.timeoutMs,
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
    application_name: "idem",
    keepAlive: true,
  });
  // An idle connection losing its server is told here; the next checkout connects again.
  pool.on("error", () => {});
  const asResult = (r: pg.QueryResult) => ({ rows: r.rows, rowCount: r.rowCount ?? 0 });
  const begin = async (client: pg.PoolClient, mode = "") => {
    await client.query(extended(`BEGIN${mode}`));
    await client.query(extended(`SET LOCAL statement_timeout = ${Math.trunc(o.timeoutMs)}`));
    await client.query(extended("SET LOCAL TimeZone = 'UTC'"));
  };
  return {
    dialect: "postgres",
    async session(): Promise<SqlSession> {
      const client = await pool.connect();
      const query = async (sql: string, values: readonly unknown[] = []) =>
        asResult(await client.query(extended(sql, values)));
      return {
        query,
        begin: () => begin(client),
        async parameterCount(sql) {
          // Parsed as one PREPARE inside a transaction rolled back: described, never run.
          await begin(client, " READ ONLY");
          try {
            await query(`PREPARE idem_doctor AS ${sql}`);
            const r = await query(
              "SELECT cardinality(parameter_types) AS n FROM pg_prepared_statements WHERE name = 'idem_doctor'",
            );
            await query("DEALLOCATE idem_doctor");
            return Number(r.rows[0]?.n ?? 0);
          } finally {
            await query("ROLLBACK");
          }
        },
        release: (broken) =>
          client.release(broken ? new Error("sql.exec: connection dropped") : undefined),
      };
    },
    // One statement in a transaction of its own (a probe, a scan, the key table's creation),
    // bounded as any.
    async query(sql, values = []) {
      const client = await pool.connect();
      let broken = false;
      try {
        await begin(client);
        const r = asResult(await client.query(extended(sql, values)));
        await client.query(extended("COMMIT"));
        return r;
      } catch (e) {
        await client.query(extended("ROLLBACK")).catch(() => {
          broken = true;
        });
        throw e;
      } finally {
        client.release(broken ? new Error("sql.exec: connection dropped") : undefined);
      }
    },
    classify: classifyPostgres,
    codeOf: (e) => sqlState(e) ?? ((e as { code?: unknown } | null)?.code as string | undefined),
    end: () => pool.end(),
  };
}
