/**
 * The Slack Web API methods the stand-in serves, their arguments and their answers, from Slack's
 * method reference as `@slack/web-api` publishes it: its TypeScript types (`Methods`, each method
 * `(options: Arguments) => Promise<Response>`), read by `scripts/slack-web-api.mjs` into
 * `slack-web-api.ts` (a test fails while that file is not what the installed @slack/web-api
 * says). Slack's own OpenAPI specification (github.com/slackapi/slack-api-specs) was archived in
 * 2024 and is out of date; the SDK's types are the description Slack maintains.
 *
 * How Slack reads arguments, which the stand-in copies: form-encoded bodies (and the query string)
 * carry every value as a string, so a JSON argument (`metadata`, `blocks`) is a JSON-encoded
 * string and a boolean is `true`/`false`/`1`/`0`; JSON bodies carry typed values; a token is
 * read from `Authorization: Bearer` or, in a form body only, from a `token` argument. A missing
 * required argument is `invalid_arguments` with `response_metadata.messages`; an argument Slack
 * does not know is ignored (and recorded as a violation, since the caller counts on it).
 */
import { SLACK_WEB_API } from "./slack-web-api.js";

/** How an argument is read. `ts` is a Slack timestamp string ("1712345678.000100"). */
export type ArgType = "string" | "boolean" | "integer" | "json" | "ts";

export interface MethodSpec {
  /** HTTP methods Slack accepts for it (the reference's "Method access"). */
  http: readonly ("GET" | "POST")[];
  args: Readonly<Record<string, { type: ArgType; required?: boolean }>>;
  /** The field names its answers may carry (see `checkAnswer`). */
  answer: AnswerShape;
}

/** An answer's field names at each level: `"[]"` an array's items, `true` anything. */
export type AnswerShape = true | { readonly [field: string]: AnswerShape };

/** The methods Slack's reference says take a GET besides a POST; the others are POST only. */
const GET_TOO = new Set(["auth.test", "conversations.history", "conversations.info"]);

/** The methods the stand-in serves, by name. */
export const METHODS: Readonly<Record<string, MethodSpec>> = Object.fromEntries(
  Object.entries(SLACK_WEB_API.methods).map(([name, m]) => [
    name,
    {
      http: GET_TOO.has(name) ? ["GET", "POST"] : ["POST"],
      args: m.args as MethodSpec["args"],
      answer: m.answer as AnswerShape,
    },
  ]),
);

/** Fields every answer may carry beside its method's (Slack's warnings, `ok: false`'s `why`). */
const EVERY_ANSWER = new Set(["ok", "error", "warning", "response_metadata", "needed", "provided"]);

/**
 * The fields of `answer` its method's description does not name, as `path` strings: a stand-in
 * answer that carries one is a stand-in bug (a client could come to count on it).
 */
export function checkAnswer(spec: MethodSpec, answer: unknown): string[] {
  const problems: string[] = [];
  const walk = (value: unknown, shape: AnswerShape, at: string, top: boolean) => {
    if (shape === true || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      const item = (shape as Record<string, AnswerShape>)["[]"];
      if (item !== undefined)
        for (const [i, v] of value.entries()) walk(v, item, `${at}[${i}]`, false);
      return;
    }
    for (const [k, v] of Object.entries(value)) {
      const sub = (shape as Record<string, AnswerShape>)[k];
      if (sub === undefined) {
        if (!(top && EVERY_ANSWER.has(k))) problems.push(`${at}.${k} is not in the description`);
        continue;
      }
      walk(v, sub, `${at}.${k}`, false);
    }
  };
  walk(answer, spec.answer, "answer", true);
  return problems;
}

/** A Slack timestamp: seconds, a dot, six digits (Slack also reads bare seconds). */
export const TS = /^\d{1,12}(\.\d{1,6})?$/;

/** The arguments of one call, read as {@link METHODS} says, and what was wrong with them. */
export interface ReadArgs {
  args: Record<string, string | number | boolean | unknown[] | Record<string, unknown>>;
  /** `[ERROR] ...` lines of an `invalid_arguments` answer. */
  errors: string[];
  /** Arguments given whose value is not a Slack timestamp (for `invalid_ts_*`). */
  badTs: string[];
  /** Arguments Slack does not know for this method (it ignores them). */
  unknown: string[];
}

function readOne(type: ArgType, raw: unknown, json: boolean): { value?: unknown; ok: boolean } {
  switch (type) {
    case "string":
      return typeof raw === "string" ? { value: raw, ok: true } : { ok: false };
    case "ts":
      return typeof raw === "string" || (json && typeof raw === "number")
        ? { value: String(raw), ok: true }
        : { ok: false };
    case "boolean":
      if (typeof raw === "boolean") return { value: raw, ok: true };
      if (raw === "true" || raw === "1") return { value: true, ok: true };
      if (raw === "false" || raw === "0") return { value: false, ok: true };
      return { ok: false };
    case "integer":
      if (typeof raw === "number" && Number.isInteger(raw)) return { value: raw, ok: true };
      if (typeof raw === "string" && /^-?\d+$/.test(raw)) return { value: Number(raw), ok: true };
      return { ok: false };
    case "json":
      if (typeof raw !== "string") return { value: raw, ok: typeof raw === "object" };
      try {
        return { value: JSON.parse(raw) as unknown, ok: true };
      } catch (e) {
        if (e instanceof SyntaxError) return { ok: false };
        throw e;
      }
  }
}

/**
 * Reads `raw` (query and body merged) as `method`'s arguments. `json` when the body was JSON
 * (typed values; a `token` there is not read, as Slack does not read it).
 */
export function readArgs(spec: MethodSpec, raw: Record<string, unknown>, json: boolean): ReadArgs {
  const out: ReadArgs = { args: {}, errors: [], badTs: [], unknown: [] };
  for (const [name, value] of Object.entries(raw)) {
    const arg = spec.args[name];
    if (!arg) {
      out.unknown.push(name);
      continue;
    }
    const read = readOne(arg.type, value, json);
    if (!read.ok || (arg.type === "ts" && !TS.test(String(read.value)))) {
      if (arg.type === "ts") out.badTs.push(name);
      else out.errors.push(`[ERROR] invalid type for field: ${name}`);
      continue;
    }
    out.args[name] = read.value as ReadArgs["args"][string];
  }
  for (const [name, arg] of Object.entries(spec.args)) {
    if (arg.required && (out.args[name] === undefined || out.args[name] === ""))
      out.errors.push(`[ERROR] missing required field: ${name}`);
  }
  return out;
}
