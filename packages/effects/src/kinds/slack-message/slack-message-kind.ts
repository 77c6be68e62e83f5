import { absent, defineEffectKind, type ProbeCall, type ProbeResult, present } from "@idem/kit";
import { z } from "zod";
import {
  openSlackClient,
  type SlackClient,
  type SlackIdentity,
} from "../../clients/slack/slack-client.js";
import { findInHistory, tsOf } from "../../clients/slack/slack-history.js";
import { slackDoctor } from "../slack/slack-doctor.js";
import {
  BROADCAST,
  findChannel,
  historyFrom,
  resolveSlackOptions,
  SLACK_MAX_TEXT,
  type SlackOptions,
  SlackOptionsSchema,
  slackChannel,
  slackTs,
  unknownChannel,
} from "../slack/slack-options.js";

/**
 * `slack.message`: one message to a configured channel, in the channel itself (not a thread
 * reply: `conversations.history` does not list replies, so a reply could not be probed).
 */
export const SlackMessageSpecSchema = z.strictObject({
  kind: z.literal("slack.message"),
  /** A channel alias of the options. */
  channel: z.string().min(1).max(64),
  /** The message, Slack's mrkdwn; at most 40,000 characters (Slack refuses longer). */
  text: z
    .string()
    .min(1)
    .max(SLACK_MAX_TEXT)
    .refine((t) => t.trim() !== "", "must not be blank")
    .refine((t) => !t.includes("\0"), "has NUL"),
  /** Whether Slack unfurls the links and media in the text (Slack's default when omitted). */
  unfurl: z.boolean().optional(),
});
/** A parsed SlackMessageSpecSchema. */
export type SlackMessageSpec = z.infer<typeof SlackMessageSpecSchema>;

type Call = ProbeCall<SlackOptions, SlackClient>;

/** A history entry as the probe reads it (a target's bytes are hostile: every field checked). */
interface HistoryMessage {
  ts?: unknown;
  user?: unknown;
  bot_id?: unknown;
  metadata?: { event_type?: unknown; event_payload?: { key?: unknown } | null } | null;
}

/** The effect key a message of this bot carries in its metadata, or undefined. */
function keyOf(raw: unknown, eventType: string, me: SlackIdentity): string | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const m = raw as HistoryMessage;
  const mine = m.user === me.userId || (me.botId !== undefined && m.bot_id === me.botId);
  if (!mine || m.metadata?.event_type !== eventType) return undefined;
  const key = m.metadata.event_payload?.key;
  return typeof key === "string" ? key : undefined;
}

/**
 * Reads the channel's history from the recording time less the clock skew (`oldest`, inclusive),
 * newest first, with every message's metadata: present when a message this bot posted carries
 * the key in its metadata. An attempt that a rate limit stops goes on where it stopped at the next
 * (`findInHistory`), so the slowest tier (one call a minute, 15 messages) still gets through.
 */
async function probe(spec: SlackMessageSpec, call: Call): Promise<ProbeResult> {
  const client = call.resource;
  const channel = slackChannel(call.options, spec.channel);
  const me = await client.auth();
  const oldest = historyFrom(call.since, call.options.clockSkewMs);
  const what = `read the history of ${spec.channel} (${channel})`;
  const found = await findInHistory(
    client,
    { channel, oldest, key: call.key, what },
    (m) => keyOf(m, call.options.eventType, me) === call.key,
  );
  return found === undefined ? absent() : present({ channel, ts: tsOf(found) });
}

/** The `slack.message` kind (docs/kinds/slack.md). */
export const slackMessageKind = defineEffectKind({
  name: "slack.message",
  description:
    "Posts a message to a configured Slack channel, once: the message's metadata carries the effect key, and the probe reads the channel's history since the output was recorded.",
  guarantee: "exactly-once-in-effect",
  spec: SlackMessageSpecSchema,
  options: SlackOptionsSchema,
  resolveOptions: resolveSlackOptions,
  configSection: "slack",
  doctor: slackDoctor,
  check(spec, ctx) {
    const target = findChannel(ctx.options, spec.channel);
    if (!target) ctx.issue("channel", unknownChannel(ctx.options, spec.channel));
    if (!target?.broadcast && BROADCAST.test(spec.text))
      ctx.issue(
        "text",
        `notifies everyone in the channel (<!channel>, <!here>, <!everyone>); set broadcast: true on the channel ${spec.channel} to allow it`,
      );
  },
  targets: (spec) => [`slack:${spec.channel}`],
  aliases: (spec) => [{ type: "target", name: spec.channel }],
  knownAliases: (ctx) =>
    Object.keys(ctx.options.channels).map((name) => ({ type: "target", name })),
  approval: { facts: ["channel"], factsOf: (spec) => ({ channel: spec.channel }) },
  describe: (spec) => `${spec.channel}: message (${spec.text.length} characters)`,
  open: openSlackClient,
  probe,
  async apply(spec, call) {
    if (!call.probed) {
      const p = await probe(spec, call);
      if (p.status === "present") return p.detail;
    }
    const client = call.resource;
    const channel = slackChannel(call.options, spec.channel);
    client.progress.delete(call.key);
    const a = await client.call(
      "chat.postMessage",
      {
        channel,
        text: spec.text,
        metadata: { event_type: call.options.eventType, event_payload: { key: call.key } },
        ...(spec.unfurl === undefined
          ? {}
          : { unfurl_links: spec.unfurl, unfurl_media: spec.unfurl }),
      },
      `post to ${spec.channel} (${channel})`,
      { mayHavePerformed: true, scope: call.key },
    );
    return { channel, ts: tsOf(a) };
  },
  scan: {
    target: (spec) => `slack:${spec.channel}`,
    async keys(spec, call) {
      const client = call.resource;
      const channel = slackChannel(call.options, spec.channel);
      const me = await client.auth();
      const oldest = slackTs(call.clock.now() - call.options.scanWindowMs);
      const out = new Map<string, string[]>();
      const what = `read the history of ${spec.channel} (${channel})`;
      for await (const page of client.history(channel, oldest, what)) {
        for (const m of page) {
          const key = keyOf(m, call.options.eventType, me);
          if (key === undefined) continue;
          out.set(key, [...(out.get(key) ?? []), tsOf(m) ?? "?"]);
        }
      }
      return out;
    },
  },
  samples: {
    valid: (i, ctx) => {
      const channels = (ctx.options as { channels?: Record<string, unknown> } | undefined)
        ?.channels;
      return {
        kind: "slack.message" as const,
        channel: Object.keys(channels ?? {})[0] ?? "ops",
        text: `idem's conformance drill, message ${i}.`,
      };
    },
    invalid: [
      { spec: { kind: "slack.message", channel: "ops", text: "" }, field: "text" },
      { spec: { kind: "slack.message", channel: "ops", text: " \n " }, field: "text" },
      {
        spec: { kind: "slack.message", channel: "ops", text: "x".repeat(SLACK_MAX_TEXT + 1) },
        field: "text",
      },
      { spec: { kind: "slack.message", channel: "no-such-alias", text: "hi" }, field: "channel" },
      {
        spec: { kind: "slack.message", channel: "ops", text: "<!channel> deploy done" },
        field: "text",
        why: "a broadcast pages every member unless the channel allows it",
      },
    ],
  },
});
