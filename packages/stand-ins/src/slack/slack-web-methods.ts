/**
 * The Web API methods themselves, on checked arguments: `auth.test`, `chat.postMessage` (with
 * message metadata), `conversations.history` (window, cursor, `include_all_metadata`),
 * `conversations.info` and `conversations.join`, with the `ok: false` errors Slack documents for
 * them.
 */
import type { ChannelRecord, MessageRecord, SlackMetadata, SlackState } from "./slack-state.js";

/** A post as the drop knobs' predicates see it (`channel` is the channel's id). */
export interface SlackPost {
  channel: string;
  text: string;
  metadata?: SlackMetadata;
}

/** Who the stand-in's token is: one workspace, one bot user of one app. */
export interface SlackIdentity {
  teamId: string;
  team: string;
  userId: string;
  user: string;
  botId: string;
  appId: string;
}

export interface MethodContext {
  state: SlackState;
  identity: SlackIdentity;
  /** `conversations.history`: the app's `limit` (most, default), the lag of posts, and now. */
  history: { max: number; default: number; lagMs: number; now: number };
  warn(warning: string): void;
  /** Asked before a post is stored; "drop" drops the connection instead. */
  beforePost(post: SlackPost): "go" | "drop";
  /** Told after a post is stored; "drop" drops the connection instead of answering. */
  afterPost(post: SlackPost): "go" | "drop";
}

type Answer = Record<string, unknown>;
type Args = Record<string, unknown>;

/** Slack's limit on a message's `text`. */
export const MAX_TEXT = 40_000;
/** What Slack allows in `event_type` (others: a warning, and the metadata is dropped). */
const EVENT_TYPE = /^[A-Za-z0-9_-]+$/;

const no = (error: string, why?: string): Answer => ({ ok: false, error, why: why ?? error });

function messageJson(m: MessageRecord, id: SlackIdentity, withMetadata: boolean): Answer {
  const out: Answer = { type: "message", user: m.user, text: m.text, ts: m.ts, team: id.teamId };
  if (m.botId) {
    out.bot_id = m.botId;
    out.app_id = m.appId;
    out.bot_profile = {
      id: m.botId,
      app_id: m.appId,
      name: id.user,
      deleted: false,
      team_id: id.teamId,
    };
  }
  if (m.blocks) out.blocks = m.blocks;
  if (m.attachments) out.attachments = m.attachments;
  if (m.threadTs) out.thread_ts = m.threadTs;
  if (withMetadata && m.metadata) out.metadata = m.metadata;
  return out;
}

function channelJson(c: ChannelRecord): Answer {
  return {
    id: c.id,
    name: c.name,
    is_channel: !c.isPrivate,
    is_group: false,
    is_im: false,
    is_mpim: false,
    is_private: c.isPrivate,
    created: c.created,
    is_archived: c.archived,
    is_general: false,
    is_member: c.member,
    name_normalized: c.name,
    topic: { value: "", creator: "", last_set: 0 },
    purpose: { value: "", creator: "", last_set: 0 },
  };
}

function readMetadata(
  raw: unknown,
  warn: (w: string) => void,
): SlackMetadata | "invalid" | undefined {
  if (raw === undefined) return undefined;
  const isObj = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObj(raw) || typeof raw.event_type !== "string" || !isObj(raw.event_payload))
    return "invalid";
  if (!EVENT_TYPE.test(raw.event_type)) {
    warn("invalid_metadata_schema");
    return undefined;
  }
  return { event_type: raw.event_type, event_payload: raw.event_payload };
}

function postMessage(a: Args, c: MethodContext): Answer | "drop" {
  const channel = c.state.channel(String(a.channel));
  if (!channel) return no("channel_not_found");
  if (channel.archived) return no("is_archived");
  if (!channel.member) return no("not_in_channel");
  const text = typeof a.text === "string" ? a.text : "";
  const hasContent =
    text.trim() !== "" ||
    (Array.isArray(a.blocks) && a.blocks.length > 0) ||
    (Array.isArray(a.attachments) && a.attachments.length > 0) ||
    (typeof a.markdown_text === "string" && a.markdown_text !== "");
  if (!hasContent) return no("no_text");
  if (text.length > MAX_TEXT) return no("msg_too_long");
  const metadata = readMetadata(a.metadata, (w) => c.warn(w));
  if (metadata === "invalid")
    return no(
      "invalid_metadata_format",
      "metadata is not {event_type: string, event_payload: object}",
    );
  let threadTs: string | undefined;
  if (a.thread_ts !== undefined) {
    threadTs = String(a.thread_ts);
    if (!channel.messages.some((m) => m.ts === threadTs)) return no("thread_not_found");
  }
  const post: SlackPost = { channel: channel.id, text };
  if (metadata) post.metadata = metadata;
  if (c.beforePost(post) === "drop") return "drop";
  const fields: Omit<MessageRecord, "ts"> = {
    text: text || String(a.markdown_text ?? ""),
    user: c.identity.userId,
    botId: c.identity.botId,
    appId: c.identity.appId,
    postedAt: c.history.now,
  };
  if (Array.isArray(a.blocks)) fields.blocks = a.blocks;
  if (Array.isArray(a.attachments)) fields.attachments = a.attachments;
  if (metadata) fields.metadata = metadata;
  if (threadTs) {
    fields.threadTs = threadTs;
    if (a.reply_broadcast === true) fields.broadcast = true;
  }
  const message = c.state.add(channel, fields);
  if (c.afterPost(post) === "drop") return "drop";
  return {
    ok: true,
    channel: channel.id,
    ts: message.ts,
    message: messageJson(message, c.identity, true),
  };
}

function history(a: Args, c: MethodContext): Answer {
  const channel = c.state.channels.get(String(a.channel));
  if (!channel) return no("channel_not_found");
  if (!channel.member) return no("not_in_channel");
  const h = c.history;
  const limit = typeof a.limit === "number" ? Math.min(Math.max(a.limit, 1), h.max) : h.default;
  const q: Parameters<SlackState["history"]>[1] = {
    limit,
    inclusive: a.inclusive === true,
    shownBefore: h.now - h.lagMs,
  };
  if (typeof a.oldest === "string") q.oldest = a.oldest;
  if (typeof a.latest === "string") q.latest = a.latest;
  if (typeof a.cursor === "string" && a.cursor !== "") q.cursor = a.cursor;
  const page = c.state.history(channel, q);
  if (!page) return no("invalid_cursor");
  const withMetadata = a.include_all_metadata === true;
  const out: Answer = {
    ok: true,
    messages: page.messages.map((m) => messageJson(m, c.identity, withMetadata)),
    has_more: page.hasMore,
    pin_count: 0,
    channel_actions_ts: null,
    channel_actions_count: 0,
  };
  if (page.nextCursor) out.response_metadata = { next_cursor: page.nextCursor };
  return out;
}

/** Runs `method` on checked arguments; "drop" when a knob drops the connection. */
export function runMethod(method: string, a: Args, c: MethodContext): Answer | "drop" {
  const id = c.identity;
  switch (method) {
    case "auth.test":
      return {
        ok: true,
        url: `https://${id.team.toLowerCase()}.slack.com/`,
        team: id.team,
        user: id.user,
        team_id: id.teamId,
        user_id: id.userId,
        bot_id: id.botId,
        is_enterprise_install: false,
      };
    case "chat.postMessage":
      return postMessage(a, c);
    case "conversations.history":
      return history(a, c);
    case "conversations.info": {
      const channel = c.state.channels.get(String(a.channel));
      return channel ? { ok: true, channel: channelJson(channel) } : no("channel_not_found");
    }
    case "conversations.join": {
      const channel = c.state.channels.get(String(a.channel));
      if (!channel) return no("channel_not_found");
      if (channel.isPrivate) return no("method_not_supported_for_channel_type");
      if (channel.archived) return no("is_archived");
      if (channel.member) c.warn("already_in_channel");
      channel.member = true;
      return { ok: true, channel: channelJson(channel) };
    }
    default:
      return no("unknown_method");
  }
}
