import type { DoctorContext, KindFinding } from "@idem/kit";
import { keyTableSql, type SqlDriver, type SqlSession } from "./sql-driver.js";
import { targetMessage } from "./sql-failure.js";
import type { SqlOptions, SqlTarget } from "./sql-options.js";
import { openDriver, targetUrl } from "./sql-targets.js";

const said = (driver: SqlDriver, e: unknown) => {
  const code = driver.codeOf(e);
  return `${targetMessage(e)}${code ? ` (${code})` : ""}`;
};

/**
 * `idem doctor`'s check of every sql target (docs/kinds/sql.md, "Doctor"): its URL is there, the
 * server answers, the key table is idem's (or can be created), and every statement prepares with
 * as many parameters as it declares. Reads only: a PostgreSQL creation is tried inside a
 * transaction rolled back; statements are prepared and deallocated, never run.
 */
export async function sqlDoctor(ctx: DoctorContext<SqlOptions>): Promise<KindFinding[]> {
  const findings: KindFinding[] = [];
  ctx.checking("kind sql.exec");
  for (const [alias, t] of Object.entries(ctx.options.targets))
    findings.push(...(await checkTarget(alias, t, ctx)));
  return findings;
}

async function checkTarget(
  alias: string,
  t: SqlTarget,
  ctx: DoctorContext<SqlOptions>,
): Promise<KindFinding[]> {
  const at = `sql.targets.${alias}`;
  const out: KindFinding[] = [];
  const violation = (key: string, message: string, fix: string) =>
    out.push({ severity: "violation", key, message, fix });
  let url: string;
  try {
    url = targetUrl(alias, t, (v) => ctx.env(v));
  } catch (e) {
    violation(
      `${at}.urlEnv`,
      (e as Error).message,
      `set ${t.urlEnv} to the target's URL with its credentials`,
    );
    return out;
  }
  const driver = await openDriver(t, url, { timeoutMs: Math.min(t.timeoutMs, ctx.timeoutMs) });
  let session: SqlSession | undefined;
  try {
    session = await driver.session();
  } catch (e) {
    violation(
      at,
      `cannot connect: ${said(driver, e)}`,
      "check the server, the URL and its credentials",
    );
    await driver.end().catch(() => {});
    return out;
  }
  try {
    await checkKeyTable(alias, t, driver, session, out);
    for (const [name, s] of Object.entries(t.statements)) {
      const key = `${at}.statements.${name}`;
      try {
        const n = await session.parameterCount(s.sql);
        if (n !== s.params.length)
          violation(
            `${key}.params`,
            `the statement has ${n} parameter(s), params declares ${s.params.length}`,
            `declare one param per placeholder (${t.dialect === "postgres" ? "$1, $2, ..." : "?"}), in order`,
          );
      } catch (e) {
        violation(
          `${key}.sql`,
          `does not prepare: ${said(driver, e)}`,
          "fix the statement or the schema it names",
        );
      }
    }
    if (t.dialect === "mysql") await checkMysqlSession(at, session, out);
  } finally {
    session.release(false);
    await driver.end().catch(() => {});
  }
  return out;
}

/** The key table is idem's, or absent and creatable (PostgreSQL: tried and rolled back). */
async function checkKeyTable(
  alias: string,
  t: SqlTarget,
  driver: SqlDriver,
  session: SqlSession,
  out: KindFinding[],
): Promise<void> {
  const key = `sql.targets.${alias}.keyTable`;
  const sql = keyTableSql(t.dialect, t.keyTable);
  try {
    await session.query(sql.shape);
    if (t.dialect === "mysql") {
      const engine = await mysqlEngine(session, t.keyTable);
      if (engine !== undefined && engine.toLowerCase() !== "innodb")
        out.push({
          severity: "violation",
          key,
          message: `${t.keyTable} is ${engine}, not InnoDB: its rows would not commit with the statements`,
          fix: `ALTER TABLE ${t.keyTable} ENGINE=InnoDB`,
        });
    }
    return;
  } catch (e) {
    if (driver.classify(e) !== "missing-table") {
      out.push({
        severity: "violation",
        key,
        message: `${t.keyTable} is not idem's key table: ${said(driver, e)}`,
        fix: "name another keyTable, or drop that table if it is an old one of idem's",
      });
      return;
    }
  }
  if (t.dialect === "postgres") {
    try {
      await session.query("BEGIN");
      await session.query(sql.create);
    } catch (e) {
      out.push({
        severity: "violation",
        key,
        message: `${t.keyTable} does not exist and cannot be created: ${said(driver, e)}`,
        fix: `create it as a user who may: ${sql.create}`,
      });
    } finally {
      await session.query("ROLLBACK").catch(() => {});
    }
    return;
  }
  const may = await mysqlMayCreate(session, t.keyTable).catch(() => false);
  if (!may)
    out.push({
      severity: "warning",
      key,
      message: `${t.keyTable} does not exist, and the user shows no CREATE privilege for it (a role may grant one)`,
      fix: `create it as a user who may: ${sql.create}`,
    });
}

const schemaOf = (table: string) => (table.includes(".") ? table.split(".")[0] : null);
const nameOf = (table: string) => table.split(".").pop() as string;

async function mysqlEngine(session: SqlSession, table: string): Promise<string | undefined> {
  const r = await session.query(
    "SELECT ENGINE AS engine FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?",
    [schemaOf(table), nameOf(table)],
  );
  const engine = r.rows[0]?.engine;
  return typeof engine === "string" ? engine : undefined;
}

async function mysqlMayCreate(session: SqlSession, table: string): Promise<boolean> {
  const grantee =
    "CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')";
  const r = await session.query(
    `SELECT COUNT(*) AS n FROM (SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ${grantee} AND PRIVILEGE_TYPE = 'CREATE' UNION ALL SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ${grantee} AND PRIVILEGE_TYPE = 'CREATE' AND TABLE_SCHEMA = COALESCE(?, DATABASE())) p`,
    [schemaOf(table)],
  );
  return Number(r.rows[0]?.n ?? 0) > 0;
}

/** MySQL's settings that decide whether a statement's data is refused or silently changed. */
async function checkMysqlSession(at: string, session: SqlSession, out: KindFinding[]) {
  const mode = await session.query("SELECT @@SESSION.sql_mode AS m").catch(() => undefined);
  const m = String(mode?.rows[0]?.m ?? "");
  if (mode && !/STRICT_(TRANS|ALL)_TABLES/.test(m))
    out.push({
      severity: "warning",
      key: at,
      message:
        "sql_mode is not strict: MySQL truncates or zeroes a value a column cannot take instead of refusing it",
      fix: "add STRICT_TRANS_TABLES to the server's sql_mode",
    });
  const r = await session
    .query(
      "SELECT TABLE_NAME AS t, ENGINE AS e FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' AND ENGINE NOT IN (SELECT ENGINE FROM information_schema.ENGINES WHERE TRANSACTIONS = 'YES') LIMIT 5",
    )
    .catch(() => undefined);
  if (r && r.rows.length > 0)
    out.push({
      severity: "warning",
      key: at,
      message: `tables that are not transactional: ${r.rows.map((x) => `${String(x.t)} (${String(x.e)})`).join(", ")}; a statement on them is not undone when idem's transaction rolls back`,
      fix: "keep the statements on InnoDB tables",
    });
}
