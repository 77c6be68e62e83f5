/**
 * The Slack Web API methods the stand-in serves and their arguments, encoded once from Slack's
 * method reference (docs.slack.dev/reference/methods/<method>: "Arguments", "Errors").
 *
 * Why a table and not a published description: Slack's OpenAPI specification
 * (github.com/slackapi/slack-api-specs) was archived in March 2024, is OpenAPI 2.0, out of date
 * and not on npm in a maintained form; `@slack/web-api` describes the arguments as TypeScript
 * types only, which cannot check a request at run time. So the arguments below are the documented
 * ones, each with the type Slack reads it as.
 *
 * How Slack reads them, which the stand-in copies: form-encoded bodies (and the query string)
 * carry every value as a string, so a JSON argument (`metadata`, `blocks`) is a JSON-encoded
 * string and a boolean is `true`/`false`/`1`/`0`; JSON bodies carry typed values; a token is
 * read from `Authorization: Bearer` or, in a form body only, from a `token` argument. A missing
 * required argument is `invalid_arguments` with `response_metadata.messages`; an argument Slack
 * does not know is ignored (and recorded as a violation, since the caller counts on it).
 */

/** How an argument is read. `ts` is a Slack timestamp string ("1712345678.000100"). */
export type ArgType = "string" | "boolean" | "integer" | "json" | "ts";

export interface MethodSpec {
  /** HTTP methods Slack accepts for it. */
  http: readonly ("GET" | "POST")[];
  args: Readonly<Record<string, { type: ArgType; required?: boolean }>>;
}

const TOKEN = { token: { type: "string" } } as const;

export const METHODS: Readonly<Record<string, MethodSpec>> = {
  "auth.test": { http: ["GET", "POST"], args: { ...TOKEN } },
  "chat.postMessage": {
    http: ["POST"],
    args: {
      ...TOKEN,
      channel: { type: "string", required: true },
      text: { type: "string" },
      blocks: { type: "json" },
      attachments: { type: "json" },
      markdown_text: { type: "string" },
      metadata: { type: "json" },
      thread_ts: { type: "ts" },
      reply_broadcast: { type: "boolean" },
      mrkdwn: { type: "boolean" },
      parse: { type: "string" },
      link_names: { type: "boolean" },
      unfurl_links: { type: "boolean" },
      unfurl_media: { type: "boolean" },
      username: { type: "string" },
      icon_emoji: { type: "string" },
      icon_url: { type: "string" },
      as_user: { type: "boolean" },
    },
  },
  "conversations.history": {
    http: ["GET", "POST"],
    args: {
      ...TOKEN,
      channel: { type: "string", required: true },
      cursor: { type: "string" },
      include_all_metadata: { type: "boolean" },
      inclusive: { type: "boolean" },
      latest: { type: "ts" },
      limit: { type: "integer" },
      oldest: { type: "ts" },
    },
  },
  "conversations.info": {
    http: ["GET", "POST"],
    args: {
      ...TOKEN,
      channel: { type: "string", required: true },
      include_locale: { type: "boolean" },
      include_num_members: { type: "boolean" },
    },
  },
  "conversations.join": {
    http: ["POST"],
    args: { ...TOKEN, channel: { type: "string", required: true } },
  },
};

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
