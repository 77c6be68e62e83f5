import {
  type DoctorContext,
  isIdemError,
  type KindFinding,
  missingCredential,
  unreachable,
} from "@idem/kit";
import { SlackClient } from "../../clients/slack/slack-client.js";
import { slackCredentials } from "../../clients/slack/slack-credentials.js";
import type { SlackOptions } from "./slack-options.js";

/** The variables the options name, each with its config key and what it holds. */
function variables(o: SlackOptions): { variable: string; key: string; needs: string }[] {
  if (!o.rotation)
    return [{ variable: o.tokenEnv, key: "slack.tokenEnv", needs: "the Slack bot token" }];
  const r = o.rotation;
  return [
    {
      variable: r.clientIdEnv,
      key: "slack.rotation.clientIdEnv",
      needs: "the Slack app's client ID",
    },
    {
      variable: r.clientSecretEnv,
      key: "slack.rotation.clientSecretEnv",
      needs: "the Slack app's client secret",
    },
  ];
}

/**
 * `idem doctor`'s check of the config's `slack` section (docs/kinds/slack.md): the variables it
 * names are set (a violation naming each one that is not), and with `--network`, who the bot token
 * is (`auth.test`, named in doctor's summary as `slack as <user> in <team>`), or, without a token
 * to ask with or with token rotation (which doctor never refreshes), that the Web API answers.
 */
export async function slackDoctor(ctx: DoctorContext<SlackOptions>): Promise<KindFinding[]> {
  const found = variables(ctx.options).flatMap((v) => {
    const f = missingCredential(ctx, v.variable, v.key, v.needs);
    return f ? [f] : [];
  });
  if (!ctx.network) {
    ctx.checking("slack credentials");
    return found;
  }
  // Without a token to ask with (or with rotation, which doctor never refreshes): is it there?
  if (found.length > 0 || ctx.options.rotation) {
    const away = await unreachable(ctx, ctx.options.baseUrl, "slack.baseUrl");
    if (away) found.push(away);
    ctx.checking(`slack ${ctx.options.baseUrl}`);
    return found;
  }
  const options = { ...ctx.options, timeoutMs: ctx.timeoutMs, rateLimitWaitMs: 0 };
  const client = new SlackClient({
    options,
    fetch: ctx.fetch,
    clock: ctx.clock,
    credentials: (refresh) => slackCredentials({ ...ctx, options }, refresh),
  });
  try {
    const a = await client.call("auth.test", {}, "ask Slack who the token is (auth.test)");
    const user = typeof a.user === "string" ? a.user : String(a.user_id ?? "an unnamed user");
    ctx.checking(`slack as ${user}${typeof a.team === "string" ? ` in ${a.team}` : ""}`);
  } catch (e) {
    if (!isIdemError(e)) throw e;
    const away = e.code === "UNAVAILABLE";
    found.push({
      severity: "violation",
      key: away ? "slack.baseUrl" : "slack.tokenEnv",
      message: e.message,
      fix: away
        ? `start Slack's Web API at ${ctx.options.baseUrl} or fix slack.baseUrl`
        : `put a valid bot token (xoxb-...) in ${ctx.options.tokenEnv}`,
    });
  }
  return found;
}
