import { ALIAS_PATTERN, aliasOf, invalid } from "@idem/kit";
import { z } from "zod";

/** The types a statement's parameter can have (docs/kinds/sql.md, "Parameter types"). */
export const SQL_PARAM_TYPES = [
  "text",
  "integer",
  "number",
  "boolean",
  "json",
  "timestamp",
] as const;
/** One of SQL_PARAM_TYPES. */
export type SqlParamType = (typeof SQL_PARAM_TYPES)[number];

/** A name of a statement or a parameter: a SQL-like identifier. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** `table` or `schema.table`, each an unquoted identifier (quoted by idem for the dialect). */
const TABLE = /^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Statements that would end idem's transaction early: never in a configured statement. */
const TRANSACTION_CONTROL = new Set([
  "BEGIN",
  "START",
  "COMMIT",
  "END",
  "ROLLBACK",
  "ABORT",
  "SAVEPOINT",
  "RELEASE",
  "PREPARE",
  "XA",
]);
/** MySQL and MariaDB commit implicitly before these (DDL and the like): never in a statement. */
const MYSQL_IMPLICIT_COMMIT = new Set([
  "ALTER",
  "CREATE",
  "DROP",
  "RENAME",
  "TRUNCATE",
  "LOCK",
  "UNLOCK",
  "GRANT",
  "REVOKE",
  "ANALYZE",
  "OPTIMIZE",
  "REPAIR",
  "FLUSH",
  "LOAD",
  "INSTALL",
  "UNINSTALL",
  "CACHE",
]);

/**
 * Why a configured statement cannot run inside idem's transaction, or undefined: one that controls
 * the transaction, changes the session of a pooled connection (SET), or, in MySQL and MariaDB,
 * commits implicitly (DDL and the like) or holds an executable comment (which would hide either).
 */
export function statementProblem(sql: string, dialect: "postgres" | "mysql"): string | undefined {
  if (dialect === "mysql" && /\/\*M?!/.test(sql))
    return "may not hold an executable comment (/*! ... */ or /*M! ... */): MySQL and MariaDB run what it holds, which no check here sees";
  const word = firstKeyword(sql);
  if (TRANSACTION_CONTROL.has(word)) return `may not control the transaction (${word}): idem does`;
  if (word === "SET") return "may not SET: it would change a pooled connection's session";
  if (dialect === "mysql" && MYSQL_IMPLICIT_COMMIT.has(word))
    return `${word} commits implicitly in MySQL and MariaDB, which would break idem's transaction`;
  return undefined;
}

/** The first keyword of a statement, after whitespace and comments, upper-cased. */
export function firstKeyword(sql: string): string {
  const rest = sql.replace(/^(\s+|--[^\n]*(\n|$)|#[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/, "");
  return (/^[A-Za-z]+/.exec(rest)?.[0] ?? "").toUpperCase();
}

const SqlParamSchema = z.strictObject({
  name: z.string().regex(NAME, "must be an identifier (letters, digits, _)"),
  type: z.enum(SQL_PARAM_TYPES),
  /** Whether the agent may give null (SQL NULL). */
  nullable: z.boolean().default(false),
});

const SqlStatementSchema = z.strictObject({
  /** The statement, with `$1, $2, ...` (PostgreSQL) or `?` (MySQL) for the params, in order. */
  sql: z.string().min(1).max(65_536),
  /** The parameters, in the order of the placeholders; the agent names them. */
  params: z
    .array(SqlParamSchema)
    .max(100)
    .default([])
    .refine(
      (ps) => new Set(ps.map((p) => p.name)).size === ps.length,
      "must name each parameter once",
    ),
});

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be an environment variable name");

/**
 * `sql.targets.<alias>`: a database agents' statements run in (docs/kinds/sql.md). The connection
 * comes from `urlEnv` (the NAME of an environment variable holding the URL with its credentials)
 * or `url` (a URL without a password: trust or peer authentication, or the driver's own
 * environment such as PGPASSWORD); exactly one of them.
 */
export const SqlTargetSchema = z
  .strictObject({
    dialect: z.enum(["postgres", "mysql"]),
    url: z.string().min(1).max(2048).optional(),
    urlEnv: envName.optional(),
    /** The table of idem's effect keys at the target, created at the first apply. */
    keyTable: z
      .string()
      .regex(TABLE, "must be a table name, or schema.table (letters, digits, _)")
      .default("idem_effects"),
    statements: z
      .record(
        z.string().regex(NAME, "must be an identifier (letters, digits, _)"),
        SqlStatementSchema,
      )
      .refine((s) => Object.keys(s).length > 0, "must define at least one statement"),
    /** One statement's bound at the server, and a connection's; a lock wait included. */
    timeoutMs: z.number().int().min(1000).max(600_000).default(30_000),
    /** Connections kept open to the target by one process. */
    poolSize: z.number().int().min(1).max(64).default(4),
  })
  .superRefine((t, ctx) => {
    const issue = (path: (string | number)[], message: string) =>
      ctx.addIssue({ code: "custom", path, message });
    if ((t.url === undefined) === (t.urlEnv === undefined))
      issue(["url"], "give exactly one of url and urlEnv");
    if (t.url !== undefined) {
      const why = urlProblem(t.url, t.dialect);
      if (why) issue(["url"], why);
    }
    for (const [name, s] of Object.entries(t.statements)) {
      const why = statementProblem(s.sql, t.dialect);
      if (why) issue(["statements", name, "sql"], why);
    }
  });
/** A parsed `sql.targets.<alias>`. */
export type SqlTarget = z.infer<typeof SqlTargetSchema>;
/** One parsed statement of a target. */
export type SqlStatement = SqlTarget["statements"][string];

/** The options of `sql.exec`: the config's `sql` section (docs/kinds/sql.md). */
export const SqlOptionsSchema = z.strictObject({
  targets: z
    .record(
      z.string().regex(ALIAS_PATTERN, "must be an alias: letters, digits, _ and -"),
      SqlTargetSchema,
    )
    .refine((t) => Object.keys(t).length > 0, "must name at least one target"),
});
/** Parsed SqlOptionsSchema. */
export type SqlOptions = z.infer<typeof SqlOptionsSchema>;

const PROTOCOLS = { postgres: ["postgres:", "postgresql:"], mysql: ["mysql:", "mariadb:"] };

/** Why `url` cannot be a target's URL of `dialect`, or undefined. Never shows the URL. */
export function urlProblem(url: string, dialect: SqlTarget["dialect"]): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "is not a URL";
  }
  if (!PROTOCOLS[dialect].includes(u.protocol))
    return `must be a ${PROTOCOLS[dialect].map((p) => `${p}//`).join(" or ")} URL for dialect ${dialect}`;
  if (u.password !== "")
    return "may not carry a password: put the URL with its credentials in the environment variable urlEnv names";
  return undefined;
}

/**
 * The target an alias names.
 * @throws IdemError INVALID_INPUT naming `target`, listing the configured aliases.
 */
export function sqlTarget(options: SqlOptions, alias: string): SqlTarget {
  const t = aliasOf(options.targets, alias);
  if (t) return t;
  const known = Object.keys(options.targets).join(", ");
  return invalid("target", `${JSON.stringify(alias)} is not a configured sql target (${known})`);
}

/** The first target alias of the options, for the drill's samples (`db` when none parse). */
export function firstTargetAlias(options: unknown): string {
  const targets = (options as { targets?: unknown } | undefined)?.targets;
  const first =
    typeof targets === "object" && targets !== null ? Object.keys(targets)[0] : undefined;
  return first ?? "db";
}
