import {
  type Clock,
  fail,
  IdemError,
  type OpenContext,
  readCappedText,
  retryAfterMs,
  sleepOn,
} from "@idem/kit";
import type { SlackOptions } from "../../kinds/slack/slack-options.js";
import { RateWaits } from "../rate-waits.js";
import { type RefreshCall, type SlackCredentials, slackCredentials } from "./slack-credentials.js";
import { BoundedMap, type HistoryProgress } from "./slack-history.js";

/** The largest answer read (a page of 999 messages with their metadata fits many times over). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** A `ratelimited` answer without `Retry-After` waits this long (Slack's limits are per minute). */
const DEFAULT_RATE_WAIT_MS = 60_000;

/**
 * The `ok: false` errors that are the config's, never retried (docs/kinds/slack.md, "Failures"):
 * the token (unset, wrong, revoked, expired, of the wrong type, without the scope), and the
 * channel (an ID that names no channel the token can see, or one the bot is not a member of:
 * invite it). A retry cannot mend any of them; an operator can.
 */
const CONFIG_ERRORS = new Set([
  "not_authed",
  "invalid_auth",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "no_permission",
  "missing_scope",
  "not_allowed_token_type",
  "access_denied",
  "ekm_access_denied",
  "team_access_not_granted",
  "org_login_required",
  "enterprise_is_restricted",
  "channel_not_found",
  "not_in_channel",
  "restricted_action",
  "restricted_action_read_only_channel",
  "restricted_action_thread_only_channel",
  "restricted_action_non_threadable_channel",
  "invalid_metadata_schema",
]);
/** Errors the message's own content causes: INVALID_INPUT naming `text`. */
const TEXT_ERRORS = new Set(["no_text", "msg_too_long", "too_many_attachments", "invalid_blocks"]);
/** The channel moved so that nothing can be posted there as asked: a conflict. */
const CONFLICT_ERRORS = new Set(["is_archived", "channel_is_archived"]);

/** Who the token is (`auth.test`): the probes count only this bot's messages. */
export interface SlackIdentity {
  userId: string;
  botId: string | undefined;
}

/** The refusals of a token that a new one may mend (read again, or refreshed). */
const RENEWABLE = new Set(["invalid_auth", "token_expired", "token_revoked", "not_authed"]);
/** The refusals of a refresh that only an operator can mend. */
const REFRESH_REFUSED = new Set([
  "invalid_refresh_token",
  "invalid_client_id",
  "bad_client_secret",
  "invalid_grant_type",
  "token_rotation_not_enabled",
]);

/** One page of a channel's history, newest first. */
export interface HistoryPage {
  messages: unknown[];
  nextCursor: string | undefined;
}

/** What a history page asks: the window (`oldest` and `latest` included) and the cursor. */
export interface HistoryQuery {
  oldest: string;
  latest?: string;
  cursor?: string;
}

/** The parts a Slack client is made of. */
export interface SlackClientParts {
  options: SlackOptions;
  fetch: typeof fetch;
  clock: Clock;
  /** Its credentials, given the client's own `refresh` (token rotation calls Slack). */
  credentials: (refresh: RefreshCall) => SlackCredentials;
}

/**
 * The Web API calls of `slack.message` over `fetch`: the bot token as `Authorization: Bearer`,
 * JSON bodies with `charset=utf-8`, a timeout on every call, and every answer that is not
 * `ok: true` mapped onto idem's failures. The token is only ever a header.
 *
 * As Slack asks of a client: a token Slack refuses is renewed once (read again, or refreshed with
 * token rotation) before the refusal stands; `ratelimited` (HTTP 429) is waited out for its
 * `Retry-After`, within `rateLimitWaitMs` per effect; a probe right after a post whose answer was
 * lost waits `readLagMs` for history to show it.
 */
export class SlackClient {
  private identity: Promise<SlackIdentity> | undefined;
  private readonly credentials: SlackCredentials;
  private readonly waits: RateWaits;
  /** When a post's answer was lost, by effect key. */
  private readonly lost = new Map<string, number>();
  /** Where an interrupted probe stopped, by effect key (see `slack-history.ts`). */
  readonly progress = new BoundedMap<string, HistoryProgress>(10_000);

  constructor(private readonly parts: SlackClientParts) {
    this.credentials = parts.credentials((a) => this.refresh(a));
    this.waits = new RateWaits(parts.clock, parts.options.rateLimitWaitMs);
  }

  get options(): SlackOptions {
    return this.parts.options;
  }

  /** One HTTP call of `method`: its status, headers and JSON object body (undefined when none). */
  private async once(
    method: string,
    args: Record<string, unknown>,
    what: string,
    authorization: string | undefined,
    o: { mayHavePerformed?: boolean; scope?: string },
  ): Promise<{ status: number; headers: Headers; body: Record<string, unknown> | undefined }> {
    const { timeoutMs, baseUrl } = this.parts.options;
    const url = new URL(`${baseUrl.replace(/\/+$/, "")}/api/${method}`);
    const signal = AbortSignal.timeout(timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await this.parts.fetch(url, {
        method: "POST",
        headers: {
          ...(authorization === undefined ? {} : { authorization }),
          "content-type": "application/json; charset=utf-8",
        },
        body: JSON.stringify(args),
        signal,
        redirect: "manual",
      });
      text = await readCappedText(res, MAX_ANSWER_BYTES, "Slack's answer");
    } catch (e) {
      if (e instanceof IdemError) throw e;
      if (o.mayHavePerformed && o.scope !== undefined)
        this.lost.set(o.scope, this.parts.clock.now());
      const how = signal.aborted ? `timed out after ${timeoutMs} ms` : "failed before an answer";
      const after = o.mayHavePerformed
        ? "; Slack may have posted it: the next attempt reads the channel's history first"
        : "";
      throw fail.transient(`${what}: ${how}${after}`, { cause: e });
    }
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        body = parsed as Record<string, unknown>;
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
    }
    return { status: res.status, headers: res.headers, body };
  }

  /**
   * Waits out a `ratelimited` answer within the effect's deadline: true to call again.
   * @throws IdemError UNAVAILABLE with `retryAfterMs` past the deadline.
   */
  private async limited(headers: Headers, what: string, scope: string): Promise<true> {
    const wait = Math.max(
      1000,
      retryAfterMs(headers, this.parts.clock.now()) ?? DEFAULT_RATE_WAIT_MS,
    );
    if (await this.waits.wait(scope, wait)) return true;
    throw fail.transient(
      `${what}: Slack rate-limited the call (ratelimited) past rateLimitWaitMs`,
      {
        retryAfterMs: wait,
        details: { status: 429, error: "ratelimited" },
      },
    );
  }

  /**
   * Calls `method` with a JSON body; answers the `ok: true` body. `scope` is the effect key the
   * call is for (its rate-limit waits share one deadline).
   * @throws IdemError UNAVAILABLE for a rate limit past the deadline (with `retryAfterMs`), a 5xx,
   * or no answer (for a post, `mayHavePerformed`: the next attempt reads history first);
   * INVALID_CONFIG, INVALID_INPUT (`text`) or TARGET_CONFLICT for the `ok: false` errors above.
   */
  async call(
    method: string,
    args: Record<string, unknown>,
    what: string,
    o: { mayHavePerformed?: boolean; scope?: string } = {},
  ): Promise<Record<string, unknown>> {
    const scope = o.scope ?? "";
    let token = await this.credentials.token();
    let renewed = false;
    for (;;) {
      const a = await this.once(method, args, what, `Bearer ${token}`, o);
      if (a.status === 429 && (await this.limited(a.headers, what, scope))) continue;
      if (a.status !== 200 || a.body === undefined)
        throw fail.transient(
          `${what}: Slack answered HTTP ${a.status}${a.body ? "" : " without JSON"}`,
          { details: { status: a.status } },
        );
      if (a.body.ok === true) return a.body;
      if (typeof a.body.error === "string" && RENEWABLE.has(a.body.error) && !renewed) {
        renewed = true;
        const next = await this.credentials.renew(token);
        if (next !== undefined) {
          token = next;
          continue;
        }
      }
      throw slackFailure(a.body.error, what);
    }
  }

  /**
   * `oauth.v2.access` with `grant_type=refresh_token` (token rotation), the app's credentials as
   * HTTP Basic. @throws IdemError INVALID_CONFIG when Slack refuses the refresh; UNAVAILABLE
   */
  private async refresh(r: {
    clientId: string;
    clientSecret: string;
    refreshToken: string;
  }): Promise<Record<string, unknown>> {
    const what = "refresh the bot token (oauth.v2.access)";
    const basic = Buffer.from(`${r.clientId}:${r.clientSecret}`).toString("base64");
    const args = { grant_type: "refresh_token", refresh_token: r.refreshToken };
    for (;;) {
      const a = await this.once("oauth.v2.access", args, what, `Basic ${basic}`, {});
      if (a.status === 429 && (await this.limited(a.headers, what, "oauth"))) continue;
      if (a.status !== 200 || a.body === undefined)
        throw fail.transient(`${what}: Slack answered HTTP ${a.status}`);
      if (a.body.ok === true) return a.body;
      const error = String(a.body.error ?? "")
        .replace(/[^A-Za-z0-9_.-]/g, "")
        .slice(0, 80);
      if (REFRESH_REFUSED.has(error))
        throw new IdemError(
          "INVALID_CONFIG",
          `${what}: Slack answered ${error}; check slack.rotation (client ID and secret), or reinstall the app and put its refresh token in refreshTokenEnv (and remove stateFile)`,
          { details: { error, field: "slack.rotation" } },
        );
      throw slackFailure(error, what);
    }
  }

  /** Who the token is (`auth.test` once per client; a failure is not kept). */
  auth(): Promise<SlackIdentity> {
    this.identity ??= this.call("auth.test", {}, "ask Slack who the token is (auth.test)").then(
      (a) => {
        if (typeof a.user_id !== "string" || a.user_id === "")
          throw new IdemError("UNAVAILABLE", "auth.test answered no user_id");
        return { userId: a.user_id, botId: typeof a.bot_id === "string" ? a.bot_id : undefined };
      },
      (e: unknown) => {
        this.identity = undefined;
        throw e;
      },
    );
    return this.identity;
  }

  /**
   * Before a probe of `scope`: when a post of it lost its answer in this process less than
   * `readLagMs` ago, waits out the rest, so history shows what that post made.
   */
  async settled(scope: string): Promise<void> {
    const at = this.lost.get(scope);
    if (at === undefined) return;
    this.lost.delete(scope);
    const left = at + this.parts.options.readLagMs - this.parts.clock.now();
    if (left > 0) await sleepOn(this.parts.clock, left);
  }

  /** One page of a channel's history, newest first, with every message's metadata. */
  async historyPage(
    channel: string,
    q: HistoryQuery,
    what: string,
    scope: string,
  ): Promise<HistoryPage> {
    const a = await this.call(
      "conversations.history",
      {
        channel,
        oldest: q.oldest,
        ...(q.latest === undefined ? {} : { latest: q.latest }),
        inclusive: true,
        include_all_metadata: true,
        limit: this.parts.options.historyPageSize,
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
      },
      what,
      { scope },
    );
    const next = (a.response_metadata as { next_cursor?: unknown } | undefined)?.next_cursor;
    return {
      messages: Array.isArray(a.messages) ? a.messages : [],
      nextCursor: typeof next === "string" && next !== "" && next.length <= 1024 ? next : undefined,
    };
  }

  /**
   * The pages of a channel's history from `oldest` (inclusive), newest first, following the
   * cursor. @throws IdemError INVALID_CONFIG past `maxPages`; any failure of `call`.
   */
  async *history(
    channel: string,
    oldest: string,
    what: string,
    scope = `scan:${channel}`,
  ): AsyncGenerator<unknown[]> {
    const { maxPages } = this.parts.options;
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      if (page > maxPages)
        throw new IdemError(
          "INVALID_CONFIG",
          `${what}: more than maxPages (${maxPages}) pages of history; raise maxPages`,
        );
      const p = await this.historyPage(
        channel,
        { oldest, ...(cursor ? { cursor } : {}) },
        what,
        scope,
      );
      yield p.messages;
      if (p.nextCursor === undefined) return;
      cursor = p.nextCursor;
    }
  }
}

/** What a Slack error code looks like. */
const SLACK_CODE = /^[a-z][a-z0-9_]{0,79}$/;

/** The failure an `ok: false` error code stands for (see the sets above); unknown ones are transient. */
export function slackFailure(error: unknown, what: string): IdemError {
  // Slack's codes are snake_case words (docs.slack.dev, each method's Errors): anything else is
  // the target's bytes, maybe an echoed token (xoxb-...), and is never shown or stored.
  const code = typeof error === "string" && SLACK_CODE.test(error) ? error : "";
  const shown =
    code ||
    (error === undefined
      ? "an error without a code"
      : "an error code that is not Slack's (not shown)");
  const text = `${what}: Slack answered ${shown}`;
  const details = { error: code };
  if (CONFIG_ERRORS.has(code))
    return new IdemError("INVALID_CONFIG", `${text} (the token, its scopes or the channel)`, {
      details,
    });
  if (CONFLICT_ERRORS.has(code)) return new IdemError("TARGET_CONFLICT", text, { details });
  if (TEXT_ERRORS.has(code))
    return new IdemError("INVALID_INPUT", `text ${text}`, {
      details: { ...details, field: "text" },
    });
  if (code.startsWith("invalid_") || code === "json_not_object")
    return new IdemError("INVALID_INPUT", text, { details });
  return fail.transient(text, { details });
}

/**
 * The one client of a process for these options (one `auth.test`, one token rotation).
 * @throws IdemError INVALID_CONFIG when a variable the options name is unset (naming it, not its
 * value).
 */
export function openSlackClient(ctx: OpenContext<SlackOptions>): SlackClient {
  const credentials = (refresh: RefreshCall) => slackCredentials(ctx, refresh);
  // The variables are read now, so an unset one fails the open (and says which).
  if (!ctx.options.rotation) ctx.env(ctx.options.tokenEnv);
  return ctx.shared(
    `slack-client:${JSON.stringify(ctx.options)}`,
    () =>
      new SlackClient({ options: ctx.options, fetch: ctx.fetch, clock: ctx.clock, credentials }),
  );
}
