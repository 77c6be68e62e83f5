import { fail, IdemError, type OpenContext, readCappedText, retryAfterMs } from "@idem/kit";
import type { SlackOptions } from "./slack-options.js";

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

/**
 * The Web API calls of `slack.message` over `fetch`: the bot token as `Authorization: Bearer`,
 * JSON bodies with `charset=utf-8`, a timeout on every call, and every answer that is not
 * `ok: true` mapped onto idem's failures. The token is only ever a header.
 */
export class SlackClient {
  private identity: Promise<SlackIdentity> | undefined;

  constructor(
    private readonly parts: {
      options: SlackOptions;
      token: string;
      fetch: typeof fetch;
      now: () => number;
    },
  ) {}

  get options(): SlackOptions {
    return this.parts.options;
  }

  /**
   * Calls `method` with a JSON body; answers the `ok: true` body.
   * @throws IdemError UNAVAILABLE for a rate limit (with `retryAfterMs`), a 5xx, or no answer
   * (for a post, `mayHavePerformed`: the next attempt reads history first); INVALID_CONFIG,
   * INVALID_INPUT (`text`) or TARGET_CONFLICT for the `ok: false` errors above.
   */
  async call(
    method: string,
    args: Record<string, unknown>,
    what: string,
    o: { mayHavePerformed?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    const { timeoutMs, baseUrl } = this.parts.options;
    const url = new URL(`${baseUrl.replace(/\/+$/, "")}/api/${method}`);
    const signal = AbortSignal.timeout(timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await this.parts.fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${this.parts.token}`,
          "content-type": "application/json; charset=utf-8",
        },
        body: JSON.stringify(args),
        signal,
        redirect: "manual",
      });
      text = await readCappedText(res, MAX_ANSWER_BYTES, "Slack's answer");
    } catch (e) {
      if (e instanceof IdemError) throw e;
      const how = signal.aborted ? `timed out after ${timeoutMs} ms` : "failed before an answer";
      const after = o.mayHavePerformed
        ? "; Slack may have posted it: the next attempt reads the channel's history first"
        : "";
      throw fail.transient(`${what}: ${how}${after}`, { cause: e });
    }
    const details = { status: res.status };
    if (res.status === 429) {
      const wait = retryAfterMs(res.headers, this.parts.now()) ?? DEFAULT_RATE_WAIT_MS;
      throw fail.transient(`${what}: Slack rate-limited the call (ratelimited)`, {
        retryAfterMs: wait,
        details: { ...details, error: "ratelimited" },
      });
    }
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        body = parsed as Record<string, unknown>;
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
    }
    if (res.status !== 200 || body === undefined)
      throw fail.transient(
        `${what}: Slack answered HTTP ${res.status}${body ? "" : " without JSON"}`,
        {
          details,
        },
      );
    if (body.ok === true) return body;
    throw slackFailure(body.error, what);
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
   * The pages of a channel's history from `oldest` (inclusive), newest first, with every
   * message's metadata, following `response_metadata.next_cursor`.
   * @throws IdemError INVALID_CONFIG past `maxPages`; any failure of `call`.
   */
  async *history(channel: string, oldest: string, what: string): AsyncGenerator<unknown[]> {
    const { historyPageSize, maxPages } = this.parts.options;
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      if (page > maxPages)
        throw new IdemError(
          "INVALID_CONFIG",
          `${what}: more than maxPages (${maxPages}) pages of history; raise maxPages`,
        );
      const a = await this.call(
        "conversations.history",
        {
          channel,
          oldest,
          inclusive: true,
          include_all_metadata: true,
          limit: historyPageSize,
          ...(cursor === undefined ? {} : { cursor }),
        },
        what,
      );
      yield Array.isArray(a.messages) ? a.messages : [];
      const next = (a.response_metadata as { next_cursor?: unknown } | undefined)?.next_cursor;
      if (typeof next !== "string" || next === "" || next.length > 1024) return;
      cursor = next;
    }
  }
}

/** The failure an `ok: false` error code stands for (see the sets above); unknown ones are transient. */
export function slackFailure(error: unknown, what: string): IdemError {
  const code = typeof error === "string" ? error.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 80) : "";
  const text = `${what}: Slack answered ${code || "an error without a code"}`;
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
 * The one client of a process for these options (one `auth.test`).
 * @throws IdemError INVALID_CONFIG when the token's variable is unset (naming it, not its value).
 */
export function openSlackClient(ctx: OpenContext<SlackOptions>): SlackClient {
  const token = ctx.env(ctx.options.tokenEnv);
  return ctx.shared(
    `slack-client:${JSON.stringify(ctx.options)}`,
    () =>
      new SlackClient({
        options: ctx.options,
        token,
        fetch: ctx.fetch,
        now: () => ctx.clock.now(),
      }),
  );
}
