import { invalid } from "@idem/kit";
import { aliasOf } from "@idem/schema";
import { z } from "zod";

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be an environment variable name");

/** A channel: its ID, or its ID and whether agents' messages may notify it all at once. */
const channel = z.union([
  z.string().regex(/^[CG][A-Z0-9]{2,30}$/, "must be a channel ID (C... or G...)"),
  z.strictObject({
    id: z.string().regex(/^[CG][A-Z0-9]{2,30}$/, "must be a channel ID (C... or G...)"),
    /**
     * Whether a message may carry `<!channel>`, `<!here>` or `<!everyone>` (a notification to every
     * member): refused before record unless this is true.
     */
    broadcast: z.boolean().default(false),
  }),
]);

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
  /**
   * The environment variable holding the bot token (`xoxb-...`): read again when Slack refuses the
   * token (`invalid_auth`, `token_expired`, `token_revoked`), so a rotated secret is picked up.
   * Not read with `rotation`.
   */
  tokenEnv: envName.default("SLACK_BOT_TOKEN"),
  /**
   * Token rotation (Slack's expiring tokens: 12 hours): idem refreshes the bot token itself with
   * `oauth.v2.access` before it expires, and keeps the current pair in `stateFile` (relative to the
   * config's folder; 0600), which every idem process of this config shares under a lock: Slack
   * revokes a refresh token once it is used. The first refresh token comes from `refreshTokenEnv`.
   */
  rotation: z
    .strictObject({
      clientIdEnv: envName,
      clientSecretEnv: envName,
      refreshTokenEnv: envName,
      stateFile: z.string().min(1).max(4096),
    })
    .optional(),
  /**
   * Channel aliases agents name, each a channel ID (`C0123ABCD`, or `G...` for an old private
   * channel): an ID never changes when a channel is renamed, and `conversations.history` takes IDs
   * only. The bot must be a member of each.
   */
  channels: z
    .record(
      z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be an alias (A-Z a-z 0-9 _ . -)"),
      channel,
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
  /**
   * How long an effect's calls may wait on Slack's rate limits (`Retry-After`), counted from its
   * first wait in this process: a rate limit costs time, not an attempt. A probe interrupted past
   * it resumes where it stopped at the next attempt.
   */
  rateLimitWaitMs: z.number().int().min(0).max(21_600_000).default(600_000),
  /**
   * How long after a post whose answer was lost the next probe of that effect waits first, so that
   * history shows the post (read-after-write lag).
   */
  readLagMs: z.number().int().min(0).max(600_000).default(5_000),
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
  return channelOf(options, alias).id;
}

/**
 * The channel an alias names, with whether broadcasts may go there.
 * @throws IdemError INVALID_INPUT naming `channel`, listing the configured aliases.
 */
export function channelOf(
  options: SlackOptions,
  alias: string,
): { id: string; broadcast: boolean } {
  return findChannel(options, alias) ?? invalid("channel", unknownChannel(options, alias));
}

/** The channel an alias names, or undefined. */
export function findChannel(
  options: SlackOptions,
  alias: string,
): { id: string; broadcast: boolean } | undefined {
  const c = aliasOf(options.channels, alias);
  if (c === undefined) return undefined;
  return typeof c === "string" ? { id: c, broadcast: false } : c;
}

/** Why an alias names no channel: the configured ones. */
export function unknownChannel(options: SlackOptions, alias: string): string {
  const known = Object.keys(options.channels).join(", ");
  return `${JSON.stringify(alias)} is not a configured Slack channel (${known})`;
}

/**
 * Slack's special mentions that notify every member of a channel (or the workspace): `<!channel>`,
 * `<!here>`, `<!everyone>`, with or without a label (`<!here|here>`). Slack's "Formatting text
 * for app surfaces" documents them; agent output must not page a whole channel unless its
 * target allows it.
 */
export const BROADCAST = /<!(channel|here|everyone)(\|[^>]*)?>/i;

/** A Slack timestamp (`<seconds>.<6 digits>`) for a time in ms. */
export function slackTs(ms: number): string {
  const micros = Math.max(0, Math.floor(ms)) * 1000;
  return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, "0")}`;
}

/** The `oldest` a probe reads history from: the recording time less the skew and one second. */
export function historyFrom(since: number, clockSkewMs: number): string {
  return slackTs(Math.floor((since - clockSkewMs - 1000) / 1000) * 1000);
}
