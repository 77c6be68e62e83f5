import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { listenOnLoopback } from "../listen.js";
import { SlackAuth, type SlackRotation } from "./slack-auth.js";
import {
  handleSlackRequest,
  SlackArmed,
  type SlackArmOptions,
  type SlackCall,
  type SlackParts,
  type SlackRequestRecord,
  type SlackViolation,
} from "./slack-server.js";
import { type MessageRecord, type SlackMetadata, SlackState } from "./slack-state.js";
import { type SlackDistribution, SlackRateTiers } from "./slack-tiers.js";
import type { SlackIdentity, SlackPost } from "./slack-web-methods.js";

export interface StartSlackStandInOptions {
  /** Bot tokens the stand-in accepts (never expiring). Default one, `xoxb-stand-in-token`. */
  tokens?: string[];
  /** The clock (ms since the epoch) of timestamps, rate windows and token expiry. */
  now?: () => number;
  /**
   * Who the app is to Slack's rate limits: `non-marketplace` (commercially distributed outside the
   * Marketplace) gets `conversations.history` once a minute, 15 messages a page. Default
   * `internal` (Tier 3).
   */
  distribution?: SlackDistribution;
  /**
   * Token rotation on: `token` is an access token that expires 12 hours after it was issued, and
   * `rotation` holds the app's client ID and secret and the refresh token. Default off.
   */
  rotation?: boolean;
  /** How long a post takes to show in `conversations.history` (ms). Default 0. */
  historyLagMs?: number;
  /** The port on 127.0.0.1 (`idem stand-in slack --port`). Default: one the system picks. */
  port?: number;
}

/** A message as the stand-in holds it. */
export interface StandInMessage {
  ts: string;
  text: string;
  user: string;
  /** Set on the bot's own posts. */
  botId?: string;
  metadata?: SlackMetadata;
  threadTs?: string;
}

/**
 * A Slack Web API stand-in on 127.0.0.1 serving `auth.test`, `chat.postMessage`,
 * `conversations.history`, `conversations.info` and `conversations.join` at `${url}/api/<method>`:
 * see packages/stand-ins/README.md.
 */
export interface SlackStandIn extends AsyncDisposable {
  /** The Web API base: methods are at `${url}/api/<method>` (as `https://slack.com`). */
  readonly url: string;
  /** A bot token the stand-in accepts (with rotation, the install's first access token). */
  readonly token: string;
  /** With `rotation`: the app's OAuth credentials and the install's refresh token. */
  readonly rotation: SlackRotation | undefined;
  /** Tokens issued by `oauth.v2.access` refreshes so far. */
  refreshes(): number;
  /** Calls refused because their token had expired (`token_expired`) or was revoked. */
  expiredTokenRefusals(): number;
  /** Calls refused by the app's rate tiers (not the `rateLimit` knob). */
  tierRateLimitRefusals(): number;
  /** Revokes a token at once (`token_revoked`). */
  revokeToken(token: string): void;
  /** A new bot token that never expires (a secret rotated by hand); answers it. */
  addToken(): string;
  /** Changes who the app is to Slack's rate limits. */
  setDistribution(d: SlackDistribution): void;
  /** Changes how long a post takes to show in history. */
  setHistoryLag(ms: number): void;
  /** The bot's user id, bot id, app id and workspace. */
  readonly identity: Readonly<SlackIdentity>;

  /** Adds a channel (the bot a member unless `member: false`); answers its id (C... or G...). */
  createChannel(options: {
    name: string;
    id?: string;
    isPrivate?: boolean;
    member?: boolean;
    archived?: boolean;
  }): string;
  /** Makes the bot join or leave a channel. */
  setMember(channel: string, member: boolean): void;
  /** Adds a message directly (not counted as a post): at `at` ms or with its own `ts`. */
  addMessage(
    channel: string,
    fields: {
      text: string;
      user?: string;
      at?: number;
      ts?: string;
      metadata?: SlackMetadata;
      bot?: boolean;
    },
  ): string;
  /** A channel's messages, oldest first (thread replies included). */
  messages(channel: string): StandInMessage[];
  /** Posts stored through `chat.postMessage` (those whose answer was dropped too). */
  posts(): number;
  /** Every call received, in order. */
  requests(): readonly SlackRequestRecord[];
  /** Calls that do not match Slack's documented arguments, or that Slack refuses. */
  violations(): readonly SlackViolation[];
  /** @throws Error listing every violation, when there is one. */
  assertNoViolations(): void;
  /** Calls refused `ratelimited` so far. */
  rateLimitRefusals(): number;

  /** The next posts (or those `match` picks) are stored, then the connection is dropped. */
  dropAfterPost(options?: SlackArmOptions<SlackPost>): void;
  /** The next posts are not stored: the connection is dropped first. */
  dropBeforePost(options?: SlackArmOptions<SlackPost>): void;
  /** The next calls are answered HTTP 429 `ratelimited` with `Retry-After` (default 1 s). */
  rateLimit(options?: SlackArmOptions<SlackCall> & { retryAfterSeconds?: number }): void;
  /** The next calls are answered `ok: false` with `error` (HTTP `status`, default 200). */
  failNext(options: SlackArmOptions<SlackCall> & { error: string; status?: number }): void;
  /** Stops the server (open connections closed). Idempotent. */
  stop(): Promise<void>;
}

const IDENTITY: SlackIdentity = {
  teamId: "T0STANDIN",
  team: "Stand-in",
  userId: "U0STANDBOT",
  user: "idem-bot",
  botId: "B0STANDBOT",
  appId: "A0STANDAPP",
};

/**
 * Starts a Slack Web API stand-in on 127.0.0.1 at `port` (default: a free one).
 * @throws Error EADDRINUSE when `port` is taken.
 */
export async function startSlackStandIn(
  options: StartSlackStandInOptions = {},
): Promise<SlackStandIn> {
  const now = options.now ?? Date.now;
  const auth = new SlackAuth(now);
  const tokens = options.tokens ?? ["xoxb-stand-in-token"];
  for (const t of tokens) auth.addToken(t);
  let token = tokens[0];
  let rotation: SlackRotation | undefined;
  if (options.rotation) {
    const first = auth.install();
    token = first.accessToken;
    rotation = {
      clientId: auth.clientId,
      clientSecret: auth.clientSecret,
      refreshToken: first.refreshToken,
    };
  }
  if (!token) throw new Error("startSlackStandIn needs at least one token");
  const state = new SlackState(now);
  const parts: SlackParts = {
    state,
    auth,
    tiers: new SlackRateTiers(now, options.distribution ?? "internal"),
    historyLagMs: options.historyLagMs ?? 0,
    now,
    identity: IDENTITY,
    rateLimits: new SlackArmed(),
    failures: new SlackArmed(),
    dropBefore: new SlackArmed(),
    dropAfter: new SlackArmed(),
    counts: { posts: 0, rateLimited: 0, tierLimited: 0, expiredTokens: 0 },
    requests: [],
    violations: [],
  };
  const server = createServer((req, res) => {
    void handleSlackRequest(parts, req, res);
  });
  let url = "";
  const port = await listenOnLoopback(server, options.port ?? 0);
  url = `http://127.0.0.1:${port}`;
  const channelOf = (idOrName: string) => {
    const c = state.channel(idOrName);
    if (!c) throw new Error(`the stand-in has no channel ${idOrName}`);
    return c;
  };
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return stopped;
  };
  return {
    url,
    token,
    rotation,
    refreshes: () => auth.refreshes,
    expiredTokenRefusals: () => parts.counts.expiredTokens,
    tierRateLimitRefusals: () => parts.counts.tierLimited,
    revokeToken: (t) => auth.revoke(t),
    addToken() {
      const t = `xoxb-${randomBytes(12).toString("hex")}`;
      auth.addToken(t);
      return t;
    },
    setDistribution(d) {
      parts.tiers.distribution = d;
    },
    setHistoryLag(ms) {
      parts.historyLagMs = ms;
    },
    identity: IDENTITY,
    createChannel: (o) => state.createChannel(o).id,
    setMember(channel, member) {
      channelOf(channel).member = member;
    },
    addMessage(channel, f) {
      const fields: Omit<MessageRecord, "ts"> & { ts?: string; at?: number } = {
        text: f.text,
        user: f.bot ? IDENTITY.userId : (f.user ?? "U0SOMEONE"),
      };
      if (f.bot) Object.assign(fields, { botId: IDENTITY.botId, appId: IDENTITY.appId });
      if (f.at !== undefined) fields.at = f.at;
      if (f.ts !== undefined) fields.ts = f.ts;
      if (f.metadata) fields.metadata = f.metadata;
      return state.add(channelOf(channel), fields).ts;
    },
    messages(channel) {
      return channelOf(channel).messages.map((m) => {
        const out: StandInMessage = { ts: m.ts, text: m.text, user: m.user };
        if (m.botId) out.botId = m.botId;
        if (m.metadata) out.metadata = m.metadata;
        if (m.threadTs) out.threadTs = m.threadTs;
        return out;
      });
    },
    posts: () => parts.counts.posts,
    requests: () => [...parts.requests],
    violations: () => [...parts.violations],
    assertNoViolations() {
      if (parts.violations.length === 0) return;
      const lines = parts.violations.map(
        (v) => `${v.method}${v.error ? ` -> ${v.error}` : ""}: ${v.problems.join("; ")}`,
      );
      throw new Error(`the Slack stand-in saw ${lines.length} violation(s):\n${lines.join("\n")}`);
    },
    rateLimitRefusals: () => parts.counts.rateLimited,
    dropAfterPost: (o = {}) => parts.dropAfter.arm(o),
    dropBeforePost: (o = {}) => parts.dropBefore.arm(o),
    rateLimit: (o = {}) => parts.rateLimits.arm(o, o.retryAfterSeconds ?? 1),
    failNext: (o) => parts.failures.arm(o, { error: o.error, status: o.status ?? 200 }),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
