import { aliasOf, invalid } from "@idem/kit";
import { z } from "zod";

/**
 * The options of `slack.message` (the config's `slack` section; docs/kinds/slack.md): where the
 * Web API is, the NAME of the environment variable holding the bot token (never the token), and
 * the channels agents may post to, by alias. Nothing an agent sends reaches another channel.
 */
export const SlackOptionsSchema = z.strictObject({
  /** The Web API's origin: methods are at `<baseUrl>/api/<method>`. */
  baseUrl: z
    .url({ protocol: /^https?$/ })
    .refine((u) => {
      const url = new URL(u);
      return !url.username && !url.password && !url.search && !url.hash;
    }, "must be a plain http(s) URL without credentials, query or fragment")
    .default("https://slack.com"),
  /** The environment variable holding the bot token (`xoxb-...`). */
  tokenEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be an environment variable name")
    .default("SLACK_BOT_TOKEN"),
  /**
   * Channel aliases agents name, each a channel ID (`C0123ABCD`, or `G...` for an old private
   * channel): an ID never changes when a channel is renamed, and `conversations.history` takes IDs
   * only. The bot must be a member of each.
   */
  channels: z
    .record(
      z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be an alias (A-Z a-z 0-9 _ . -)"),
      z.string().regex(/^[CG][A-Z0-9]{2,30}$/, "must be a channel ID (C... or G...)"),
    )
    .refine((c) => Object.keys(c).length > 0, "must name at least one channel"),
  /**
   * The message metadata's `event_type` that carries the effect key (`event_payload: { key }`).
   * Slack drops metadata whose type is not letters, digits, `_` and `-`, so nothing else is taken.
   */
  eventType: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, "must be letters, digits, _ and - (Slack drops others)")
    .default("idem_effect"),
  /** One call's bound, the answer's body included. */
  timeoutMs: z.number().int().min(1000).max(600_000).default(30_000),
  /** How far Slack's clock may be behind idem's: the probe reads history from the recording time less this. */
  clockSkewMs: z.number().int().min(0).max(86_400_000).default(300_000),
  /** Messages per `conversations.history` page (Slack suggests at most 200; 15 for apps it limits). */
  historyPageSize: z.number().int().min(1).max(999).default(200),
  /** The most history pages one probe or scan reads before it gives up. */
  maxPages: z.number().int().min(1).max(1000).default(50),
  /** How far back `scan` (audit, the drill) reads, from now. */
  scanWindowMs: z
    .number()
    .int()
    .min(60_000)
    .max(366 * 86_400_000)
    .default(7 * 86_400_000),
});
/** Parsed SlackOptionsSchema. */
export type SlackOptions = z.infer<typeof SlackOptionsSchema>;

/** Slack's limit on a message's `text`, in characters. */
export const SLACK_MAX_TEXT = 40_000;

/**
 * The channel ID an alias names in the options.
 * @throws IdemError INVALID_INPUT naming `channel`, listing the configured aliases.
 */
export function slackChannel(options: SlackOptions, alias: string): string {
  const id = aliasOf(options.channels, alias);
  if (id === undefined) {
    const known = Object.keys(options.channels).join(", ");
    return invalid(
      "channel",
      `${JSON.stringify(alias)} is not a configured Slack channel (${known})`,
    );
  }
  return id;
}

/** A Slack timestamp (`<seconds>.<6 digits>`) for a time in ms. */
export function slackTs(ms: number): string {
  const micros = Math.max(0, Math.floor(ms)) * 1000;
  return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, "0")}`;
}

/** The `oldest` a probe reads history from: the recording time less the skew and one second. */
export function historyFrom(since: number, clockSkewMs: number): string {
  return slackTs(Math.floor((since - clockSkewMs - 1000) / 1000) * 1000);
}
