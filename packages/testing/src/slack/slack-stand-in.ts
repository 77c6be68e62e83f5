import { createServer, type Server } from "node:http";
import { freePort } from "../nats-server.js";
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
import type { SlackIdentity, SlackPost } from "./slack-web-methods.js";

export interface StartSlackStandInOptions {
  /** Bot tokens the stand-in accepts. Default one, `xoxb-stand-in-token`. */
  tokens?: string[];
  /** The clock (ms since the epoch) message timestamps are made from. */
  now?: () => number;
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
 * see packages/testing/README.md.
 */
export interface SlackStandIn extends AsyncDisposable {
  /** The Web API base: methods are at `${url}/api/<method>` (as `https://slack.com`). */
  readonly url: string;
  /** A bot token the stand-in accepts. */
  readonly token: string;
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

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * Starts a Slack Web API stand-in on 127.0.0.1 and a free port.
 * @throws Error when no port can be bound after 5 tries.
 */
export async function startSlackStandIn(
  options: StartSlackStandInOptions = {},
): Promise<SlackStandIn> {
  const tokens = options.tokens ?? ["xoxb-stand-in-token"];
  const [token] = tokens;
  if (!token) throw new Error("startSlackStandIn needs at least one token");
  const state = new SlackState(options.now ?? Date.now);
  const parts: SlackParts = {
    state,
    tokens: new Set(tokens),
    identity: IDENTITY,
    rateLimits: new SlackArmed(),
    failures: new SlackArmed(),
    dropBefore: new SlackArmed(),
    dropAfter: new SlackArmed(),
    counts: { posts: 0, rateLimited: 0 },
    requests: [],
    violations: [],
  };
  const server = createServer((req, res) => {
    void handleSlackRequest(parts, req, res);
  });
  let url = "";
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      await listen(server, port);
      url = `http://127.0.0.1:${port}`;
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt >= 4) throw e;
    }
  }
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
