/**
 * The Slack stand-in's memory: channels and their messages, with message timestamps as Slack
 * makes them (`<epoch seconds>.<6 digits>`, unique and increasing in a channel: a message's id)
 * and `conversations.history`'s window, order and cursors.
 */

/** Message metadata as `chat.postMessage` takes it and `conversations.history` gives it back. */
export interface SlackMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

export interface MessageRecord {
  ts: string;
  text: string;
  /** The poster: the stand-in's bot user for posts, any user id for seeded messages. */
  user: string;
  /** Set on messages the bot posted. */
  botId?: string;
  appId?: string;
  blocks?: unknown[];
  attachments?: unknown[];
  metadata?: SlackMetadata;
  /** When it was posted through the API (ms): history shows it `historyLagMs` later. */
  postedAt?: number;
  /** A reply's parent `ts` (a reply is not in the channel's history unless broadcast). */
  threadTs?: string;
  broadcast?: boolean;
}

export interface ChannelRecord {
  id: string;
  name: string;
  isPrivate: boolean;
  /** Whether the stand-in's bot is a member (it must be, to post or read history). */
  member: boolean;
  archived: boolean;
  created: number;
  /** Oldest first. */
  messages: MessageRecord[];
}

/** A timestamp as a number of microseconds, for comparing. */
export const tsValue = (ts: string): number => {
  const [s = "0", f = ""] = ts.split(".");
  return Number(s) * 1_000_000 + Number(f.padEnd(6, "0").slice(0, 6));
};
const tsString = (micros: number) =>
  `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, "0")}`;

/** A history cursor as Slack makes them: base64 of `next_ts:<ts without its dot>`. */
export const cursorOf = (ts: string) =>
  Buffer.from(`next_ts:${ts.replace(".", "")}`).toString("base64");
function cursorTs(cursor: string): number | undefined {
  const m = /^next_ts:(\d{7,})$/.exec(Buffer.from(cursor, "base64").toString("utf8"));
  return m?.[1] ? Number(m[1]) : undefined;
}

/** What `conversations.history` answers for one page. */
export interface HistoryPage {
  messages: MessageRecord[];
  hasMore: boolean;
  nextCursor?: string;
}

export class SlackState {
  readonly channels = new Map<string, ChannelRecord>();
  private nextChannel = 1;

  constructor(private readonly now: () => number) {}

  createChannel(o: {
    name: string;
    id?: string;
    isPrivate?: boolean;
    member?: boolean;
    archived?: boolean;
  }): ChannelRecord {
    const prefix = o.isPrivate ? "G" : "C";
    const id = o.id ?? `${prefix}0STAND${String(this.nextChannel++).padStart(4, "0")}`;
    if (this.channels.has(id) || this.byName(o.name))
      throw new Error(`a channel ${id} or #${o.name} exists already`);
    const channel: ChannelRecord = {
      id,
      name: o.name.replace(/^#/, ""),
      isPrivate: o.isPrivate ?? false,
      member: o.member ?? true,
      archived: o.archived ?? false,
      created: Math.floor(this.now() / 1000),
      messages: [],
    };
    this.channels.set(id, channel);
    return channel;
  }

  private byName(name: string): ChannelRecord | undefined {
    const n = name.replace(/^#/, "");
    for (const c of this.channels.values()) if (c.name === n) return c;
    return undefined;
  }

  /** The channel an argument names: its id, or (as `chat.postMessage` allows) its #name. */
  channel(idOrName: string): ChannelRecord | undefined {
    return this.channels.get(idOrName) ?? this.byName(idOrName);
  }

  /** A new message timestamp in `channel`: now, made unique and increasing there. */
  private nextTs(channel: ChannelRecord, at?: number): string {
    let micros = Math.floor(at ?? this.now()) * 1000;
    const last = channel.messages.at(-1);
    if (last && at === undefined) micros = Math.max(micros, tsValue(last.ts) + 1);
    const taken = new Set(channel.messages.map((m) => tsValue(m.ts)));
    while (taken.has(micros)) micros++;
    return tsString(micros);
  }

  /** Appends a message (a post, or a seeded one with its own `at` ms or `ts`). */
  add(channel: ChannelRecord, fields: Omit<MessageRecord, "ts"> & { ts?: string; at?: number }) {
    const { at, ts, ...rest } = fields;
    const message: MessageRecord = { ...rest, ts: ts ?? this.nextTs(channel, at) };
    if (channel.messages.some((m) => m.ts === message.ts))
      throw new Error(`${channel.id} has a message at ${message.ts} already`);
    channel.messages.push(message);
    channel.messages.sort((a, b) => tsValue(a.ts) - tsValue(b.ts));
    return message;
  }

  /**
   * One page of a channel's history, newest first: messages after `oldest` and before `latest`
   * (both ends included with `inclusive`), without thread replies unless broadcast; a cursor
   * continues where the previous page stopped. Undefined for a cursor Slack did not make.
   */
  history(
    channel: ChannelRecord,
    q: {
      oldest?: string;
      latest?: string;
      inclusive?: boolean;
      limit: number;
      cursor?: string;
      /** Posts made through the API at this time (ms) or later are not shown yet. */
      shownBefore?: number;
    },
  ): HistoryPage | undefined {
    const oldest = tsValue(q.oldest ?? "0");
    const latest = q.latest === undefined ? Number.POSITIVE_INFINITY : tsValue(q.latest);
    let upTo = Number.POSITIVE_INFINITY;
    if (q.cursor !== undefined) {
      const at = cursorTs(q.cursor);
      if (at === undefined) return undefined;
      upTo = at;
    }
    const inRange = channel.messages
      .filter((m) => {
        const v = tsValue(m.ts);
        const low = q.inclusive ? v >= oldest : v > oldest;
        const high = q.inclusive ? v <= latest : v < latest;
        const visible =
          (m.threadTs === undefined || m.threadTs === m.ts || m.broadcast === true) &&
          (m.postedAt === undefined || q.shownBefore === undefined || m.postedAt <= q.shownBefore);
        return low && high && v <= upTo && visible;
      })
      .reverse();
    const page = inRange.slice(0, q.limit);
    const next = inRange[q.limit];
    return next
      ? { messages: page, hasMore: true, nextCursor: cursorOf(next.ts) }
      : { messages: page, hasMore: false };
  }
}
