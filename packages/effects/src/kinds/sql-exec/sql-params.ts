import { aliasOf, invalid } from "@idem/kit";
import type { SqlExecSpec } from "./spec.js";
import type { SqlParamType, SqlTarget } from "./sql-options.js";

/** The most bytes a text or json parameter may have (UTF-8; json as idem sends it). */
export const MAX_PARAM_BYTES = 1_048_576;

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?(Z|[+-](\d{2}):(\d{2}))$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be sent as text to either database (NUL, half a surrogate pair). */
function stringProblem(s: string): string | undefined {
  if (s.includes("\0")) return "has NUL, which PostgreSQL's text refuses";
  if (LONE_SURROGATE.test(s)) return "has half of a UTF-16 surrogate pair, which is not UTF-8";
  return undefined;
}

/** The first string problem anywhere in a JSON value, its keys included. */
function jsonProblem(v: unknown): string | undefined {
  if (typeof v === "string") return stringProblem(v);
  if (Array.isArray(v)) {
    for (const x of v) {
      const why = jsonProblem(x);
      if (why) return why;
    }
  } else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      const why = stringProblem(k) ?? jsonProblem(x);
      if (why) return why;
    }
  }
  return undefined;
}

/** Whether `s` is a timestamp idem takes: ISO 8601 with seconds, at most ms, and a zone. */
function isTimestamp(s: string): boolean {
  const m = TIMESTAMP.exec(s);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [offH, offM] = [Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (year === 0 || hour > 23 || minute > 59 || second > 59 || offH > 14 || offM > 59) return false;
  const d = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC maps years 0-99 onto 1900-1999: set the year itself.
  d.setUTCFullYear(year, month - 1, day);
  return d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

/** Why `value` is not a value of `type`, or undefined (null is the caller's business). */
export function paramProblem(type: SqlParamType, value: unknown): string | undefined {
  switch (type) {
    case "text":
      if (typeof value !== "string") return "must be a string (text)";
      if (Buffer.byteLength(value) > MAX_PARAM_BYTES)
        return `is longer than ${MAX_PARAM_BYTES} bytes`;
      return stringProblem(value);
    case "integer":
      return Number.isSafeInteger(value)
        ? undefined
        : "must be an integer between -(2^53-1) and 2^53-1";
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : "must be a number";
    case "boolean":
      return typeof value === "boolean" ? undefined : "must be true or false";
    case "json":
      if (Buffer.byteLength(JSON.stringify(value)) > MAX_PARAM_BYTES)
        return `is longer than ${MAX_PARAM_BYTES} bytes as JSON`;
      return jsonProblem(value);
    case "timestamp":
      return typeof value === "string" && isTimestamp(value)
        ? undefined
        : "must be a timestamp: YYYY-MM-DDTHH:MM:SS[.sss] with Z or ±HH:MM";
  }
}

/**
 * The value bound for a parameter: json as its JSON text, a timestamp in UTC (ISO 8601 for
 * PostgreSQL; `YYYY-MM-DD HH:MM:SS.sss` for MySQL, whose sessions idem sets to UTC), the rest as
 * they are; null as SQL NULL.
 */
export function boundValue(type: SqlParamType, value: unknown, dialect: SqlTarget["dialect"]) {
  if (value === null) return null;
  if (type === "json") return JSON.stringify(value);
  if (type === "timestamp") {
    const iso = new Date(Date.parse(value as string)).toISOString();
    return dialect === "postgres" ? iso : iso.replace("T", " ").replace("Z", "");
  }
  return value;
}

/** One statement ready to run: its name, its SQL and its bound values in placeholder order. */
export interface BoundStatement {
  name: string;
  sql: string;
  values: unknown[];
}

/**
 * Checks every statement a spec names against its target: the statement is configured, every
 * parameter it declares is given (null only where nullable) with a value of its type, and no other.
 * Reports each problem with `issue(field, message)`: `statements.<i>.name`,
 * `statements.<i>.params.<name>`, `statements.<i>.params`.
 */
export function checkStatements(
  spec: SqlExecSpec,
  target: SqlTarget,
  issue: (field: string, message: string) => void,
): void {
  spec.statements.forEach((s, i) => {
    const at = `statements.${i}`;
    const statement = aliasOf(target.statements, s.name);
    if (!statement) {
      const known = Object.keys(target.statements).join(", ");
      issue(
        `${at}.name`,
        `${JSON.stringify(s.name)} is not a statement of ${spec.target} (${known})`,
      );
      return;
    }
    const given = s.params ?? {};
    const declared = new Set(statement.params.map((p) => p.name));
    for (const name of Object.keys(given))
      if (!declared.has(name))
        issue(
          `${at}.params.${name}`,
          `is not a parameter of ${s.name} (its parameters: ${[...declared].join(", ") || "none"})`,
        );
    for (const p of statement.params) {
      const field = `${at}.params.${p.name}`;
      if (!Object.hasOwn(given, p.name)) {
        issue(field, `is missing (${p.type}${p.nullable ? ", or null" : ""})`);
        continue;
      }
      const value = given[p.name];
      if (value === null) {
        if (!p.nullable) issue(field, "may not be null");
        continue;
      }
      const why = paramProblem(p.type, value);
      if (why) issue(field, why);
    }
  });
}

/**
 * The statements of a spec, bound for the target's dialect, after the same checks as
 * `checkStatements` (a stored spec is checked again at the target, whose config may have changed).
 * @throws IdemError INVALID_INPUT naming the first field at fault.
 */
export function boundStatements(spec: SqlExecSpec, target: SqlTarget): BoundStatement[] {
  checkStatements(spec, target, (field, message) => invalid(field, message));
  return spec.statements.map((s) => {
    const statement = aliasOf(target.statements, s.name) as SqlTarget["statements"][string];
    const given = s.params ?? {};
    return {
      name: s.name,
      sql: statement.sql,
      values: statement.params.map((p) => boundValue(p.type, given[p.name], target.dialect)),
    };
  });
}
