/**
 * The Slack stand-in's request handling: `/api/<method>` with arguments from the query string and
 * a form-encoded or JSON body, the token, the knobs (rate limits, injected errors, dropped
 * connections around a post), the arguments checked against {@link METHODS}, then the method.
 * Every answer is HTTP 200 with `ok`, except `ratelimited` (HTTP 429 with `Retry-After`), as
 * Slack answers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SlackAuth } from "./slack-auth.js";
import { checkAnswer, METHODS, readArgs } from "./slack-methods.js";
import type { SlackState } from "./slack-state.js";
import { historyLimit, type SlackRateTiers } from "./slack-tiers.js";
import { runMethod, type SlackIdentity, type SlackPost } from "./slack-web-methods.js";

/** A call as the knobs' predicates see it. */
export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
}

/** A call that does not match Slack's documented arguments, or that Slack refuses. */
export interface SlackViolation {
  method: string;
  /** `response`: the stand-in's own answer does not match the description (a stand-in bug). */
  side?: "request" | "response";
  /** True when Slack answers it with an error; false when Slack silently ignores the problem. */
  rejected: boolean;
  /** The `error` answered, when rejected. */
  error?: string;
  problems: string[];
}

/** One call the stand-in received, in order. */
export interface SlackRequestRecord {
  method: string;
  httpMethod: string;
  /** HTTP status; 0 when the connection was dropped. */
  status: number;
  ok?: boolean;
  error?: string;
  dropped: boolean;
}

/** Arms a fault for the next `times` events (1 by default) that `match` accepts (all if none). */
export interface SlackArmOptions<T> {
  times?: number;
  match?: (event: T) => boolean;
}

/** Rules armed by tests, each used up by the events it matches. */
export class SlackArmed<T> {
  private readonly rules: { left: number; match?: (e: T) => boolean; data: unknown }[] = [];

  arm(o: SlackArmOptions<T>, data?: unknown): void {
    this.rules.push({ left: o.times ?? 1, data, ...(o.match ? { match: o.match } : {}) });
  }

  take(event: T): { data: unknown } | undefined {
    const rule = this.rules.find((r) => r.left > 0 && (!r.match || r.match(event)));
    if (!rule) return undefined;
    rule.left--;
    return { data: rule.data };
  }
}

export interface SlackParts {
  state: SlackState;
  auth: SlackAuth;
  tiers: SlackRateTiers;
  /** How long a post takes to show in `conversations.history` (read-after-write lag). */
  historyLagMs: number;
  now: () => number;
  identity: SlackIdentity;
  rateLimits: SlackArmed<SlackCall>;
  failures: SlackArmed<SlackCall>;
  dropBefore: SlackArmed<SlackPost>;
  dropAfter: SlackArmed<SlackPost>;
  counts: { posts: number; rateLimited: number; tierLimited: number; expiredTokens: number };
  requests: SlackRequestRecord[];
  violations: SlackViolation[];
}

const MAX_REQUEST = 10 * 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Handles one call; never throws (an error of its own is answered `internal_error`). */
export async function handleSlackRequest(
  p: SlackParts,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://stand-in");
  const name = url.pathname.replace(/^\/api\//, "");
  const record: SlackRequestRecord = {
    method: name,
    httpMethod: req.method ?? "GET",
    status: 0,
    dropped: false,
  };
  p.requests.push(record);
  const warnings: string[] = [];
  const violate = (v: Omit<SlackViolation, "method">) => p.violations.push({ method: name, ...v });
  const send = (
    body: Record<string, unknown>,
    status = 200,
    headers: Record<string, string> = {},
  ) => {
    const out = { ...body };
    if (warnings.length > 0) {
      out.warning = warnings.join(",");
      const meta = (out.response_metadata ?? {}) as Record<string, unknown>;
      out.response_metadata = { ...meta, warnings };
    }
    const spec = METHODS[name];
    const problems = spec ? checkAnswer(spec, out) : [];
    if (problems.length > 0) violate({ side: "response", rejected: false, problems });
    record.status = status;
    record.ok = out.ok === true;
    if (typeof out.error === "string") record.error = out.error;
    const text = JSON.stringify(out);
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "x-slack-req-id": `stand-in-${p.requests.length}`,
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  };
  const fail = (error: string, problems: string[], extra: Record<string, unknown> = {}) => {
    violate({ rejected: true, error, problems });
    send({ ok: false, error, ...extra });
  };
  const drop = () => {
    record.dropped = true;
    req.socket.destroy();
  };
  try {
    const raw = await readBody(req);
    const spec = METHODS[name];
    if (!url.pathname.startsWith("/api/") || !spec)
      return fail("unknown_method", [`${url.pathname}: not a Web API method the stand-in serves`]);
    if (raw === undefined) return fail("invalid_form_data", ["a body over 10 MB"]);
    if (!spec.http.includes(record.httpMethod as "GET" | "POST"))
      violate({
        rejected: false,
        problems: [`${record.httpMethod}: Slack documents ${spec.http.join(" or ")}`],
      });
    const type = (req.headers["content-type"] ?? "").toLowerCase();
    const given: Record<string, unknown> = Object.fromEntries(url.searchParams);
    const json = type.startsWith("application/json");
    let bodyToken: string | undefined;
    if (json && raw.length > 0) {
      if (!/charset=utf-8/.test(type)) warnings.push("missing_charset");
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch (e) {
        if (!(e instanceof SyntaxError)) throw e;
        return fail("invalid_json", [`the body is not JSON: ${e.message}`]);
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
        return fail("invalid_json", ["the JSON body is not an object"]);
      Object.assign(given, parsed);
      if ("token" in given) {
        delete given.token;
        violate({
          rejected: false,
          problems: ["a token in a JSON body: Slack does not read it there"],
        });
      }
    } else if (raw.length > 0) {
      if (!type.startsWith("application/x-www-form-urlencoded"))
        return fail("invalid_form_data", [`Content-Type ${type || "(none)"} with a body`]);
      const form = Object.fromEntries(new URLSearchParams(raw));
      bodyToken = form.token;
      Object.assign(given, form);
    }
    if (url.searchParams.has("token"))
      violate({
        rejected: false,
        problems: ["a token in the query string: Slack refuses it for new apps"],
      });
    const header = /^bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const token = header ?? bodyToken;
    delete given.token;
    const tier = (channel?: unknown) => {
      const wait = p.tiers.take(name, typeof channel === "string" ? channel : undefined);
      if (wait === undefined) return false;
      p.counts.rateLimited++;
      p.counts.tierLimited++;
      send({ ok: false, error: "ratelimited" }, 429, { "retry-after": String(wait) });
      return true;
    };
    // The app's own credentials (in the body, or HTTP Basic), not a token.
    if (name === "oauth.v2.access") {
      const basic = /^basic\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
      if (basic) {
        const [id, secret] = Buffer.from(basic, "base64").toString("utf8").split(":");
        given.client_id ??= id;
        given.client_secret ??= secret;
      }
      if (tier()) return;
      const read = readArgs(spec, given, json);
      if (read.errors.length > 0)
        return fail("invalid_arguments", read.errors, {
          response_metadata: { messages: read.errors },
        });
      const a = read.args as Record<string, string | undefined>;
      const answer = p.auth.refresh({
        clientId: a.client_id,
        clientSecret: a.client_secret,
        grantType: a.grant_type,
        refreshToken: a.refresh_token,
      });
      if (answer.ok !== true)
        return fail(String(answer.error), [`oauth.v2.access: ${answer.error}`]);
      return send(answer);
    }
    if (token === undefined) return fail("not_authed", ["no token"]);
    const standing = p.auth.check(token);
    if (standing === "invalid_auth" && !p.auth.knows(token))
      return fail("invalid_auth", ["a token the stand-in does not know"]);
    if (standing !== "ok") {
      // Expired (rotation: after 12 hours) or revoked: Slack doing its job; a client renews it.
      p.counts.expiredTokens++;
      return send({ ok: false, error: standing });
    }
    if (tier(given.channel)) return;
    const call: SlackCall = { method: name, args: given };
    const limited = p.rateLimits.take(call);
    if (limited) {
      p.counts.rateLimited++;
      const after = String(limited.data as number);
      return send({ ok: false, error: "ratelimited" }, 429, { "retry-after": after });
    }
    const failure = p.failures.take(call);
    if (failure) {
      const f = failure.data as { error: string; status: number };
      return send({ ok: false, error: f.error }, f.status);
    }
    const read = readArgs(spec, given, json);
    if (read.unknown.length > 0)
      violate({
        rejected: false,
        problems: read.unknown.map((a) => `unknown argument "${a}": Slack ignores it`),
      });
    if (read.errors.length > 0)
      return fail("invalid_arguments", read.errors, {
        response_metadata: { messages: read.errors },
      });
    if (read.badTs.length > 0) {
      const which =
        read.badTs[0] === "latest"
          ? "invalid_ts_latest"
          : read.badTs[0] === "oldest"
            ? "invalid_ts_oldest"
            : "invalid_arguments";
      return fail(
        which,
        read.badTs.map((a) => `${a} is not a Slack timestamp`),
      );
    }
    const answer = runMethod(name, read.args, {
      state: p.state,
      identity: p.identity,
      history: { ...historyLimit(p.tiers.distribution), lagMs: p.historyLagMs, now: p.now() },
      warn: (w) => warnings.push(w),
      beforePost: (post) => (p.dropBefore.take(post) ? "drop" : "go"),
      afterPost: (post) => {
        p.counts.posts++;
        return p.dropAfter.take(post) ? "drop" : "go";
      },
    });
    if (answer === "drop") return drop();
    if (answer.ok === false)
      return fail(String(answer.error), [String(answer.why ?? answer.error)]);
    return send(answer);
  } catch (e) {
    violate({
      rejected: true,
      error: "internal_error",
      problems: [`the stand-in failed: ${e instanceof Error ? e.stack : String(e)}`],
    });
    if (!res.headersSent) send({ ok: false, error: "internal_error" });
  }
}
