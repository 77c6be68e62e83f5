import type { DoctorContext, KindFinding } from "@idem/kit";
import { isIdemError, missingCredential, unreachable } from "@idem/kit";
import { GitHubClient, repoPath } from "../../clients/github/github-client.js";
import { githubCredentials } from "../../clients/github/github-credentials.js";
import type { GitHubOptions } from "./github-options.js";

/** The config key and the variable of the credential the options name. */
function credentialOf(o: GitHubOptions): { key: string; variable?: string; needs: string } {
  if (!o.app) return { key: "github.tokenEnv", variable: o.tokenEnv, needs: "the GitHub token" };
  if (o.app.privateKeyEnv !== undefined)
    return {
      key: "github.app.privateKeyEnv",
      variable: o.app.privateKeyEnv,
      needs: "the GitHub App's private key",
    };
  return { key: "github.app.privateKeyFile", needs: "the GitHub App's private key" };
}

/**
 * `idem doctor`'s check of the config's `github` section (shared by the three `github.*` kinds; the
 * `github.issue` kind runs it): its credentials are there (the token's variable, or the App's
 * key: a violation naming the variable when not), and with `--network`, that the base URL answers,
 * who the token is (named in doctor's summary, `github as <login>`) and that `login` is that
 * account (a wrong login makes every probe answer absent and every retry a second item), and that
 * each repository answers. An installation token from `tokenEnv` cannot say who it is: its `login`
 * must at least name a bot, and is checked for good against the first item idem makes.
 */
export async function githubDoctor(ctx: DoctorContext<GitHubOptions>): Promise<KindFinding[]> {
  const found: KindFinding[] = [];
  const options = { ...ctx.options, timeoutMs: ctx.timeoutMs, rateLimitWaitMs: 0 };
  let client: GitHubClient;
  try {
    const credentials = githubCredentials({ ...ctx, options });
    client = new GitHubClient({ options, credentials, fetch: ctx.fetch, clock: ctx.clock });
  } catch (e) {
    if (!isIdemError(e, "INVALID_CONFIG")) throw e;
    const c = credentialOf(ctx.options);
    const named = c.variable && missingCredential(ctx, c.variable, c.key, c.needs);
    found.push(named || { severity: "violation", key: c.key, message: e.message });
    // Where the credential is missing, the target may be wrong too: said at once, not next time.
    if (ctx.network) {
      // GET /rate_limit: answered without a token, and counted against no quota.
      const at = `${ctx.options.baseUrl.replace(/\/+$/, "")}/rate_limit`;
      const away = await unreachable(ctx, at, "github.baseUrl");
      if (away) found.push(away);
    }
    return found;
  }
  if (!ctx.network) {
    ctx.checking("github credentials");
    return found;
  }
  try {
    const who = await client.identity.resolve();
    ctx.checking(`github as ${who.login}${who.verified ? "" : " (not confirmed yet)"}`);
    if (!who.verified) {
      const what = `read ${who.login} (GET /users/{login})`;
      const a = await client.send(
        "GET",
        client.url(`/users/${encodeURIComponent(who.login)}`),
        what,
      );
      const type = (a.body as { type?: unknown } | undefined)?.type;
      if (a.status !== 200 || type !== "Bot")
        found.push({
          severity: "violation",
          key: "github.login",
          message: `github.login ${who.login} is not a GitHub App's bot (GET /users answered ${a.status}${typeof type === "string" ? `, type ${type}` : ""}); an installation token acts as <app-slug>[bot]`,
          fix: "set login to the App's bot (my-app[bot]), or configure github.app so idem names it",
        });
      else
        found.push({
          severity: "warning",
          key: "github.login",
          message: `github.login ${who.login} is a bot, but this token cannot say whose: idem checks it against the author of the first item it makes`,
          fix: "configure github.app (appId, installationId, private key) for a login GitHub confirms",
        });
    }
  } catch (e) {
    if (!isIdemError(e)) throw e;
    found.push({
      severity: "violation",
      key: e.details?.field === "github.login" ? "github.login" : "github",
      message: e.message,
    });
    return found;
  }
  for (const [alias, repo] of Object.entries(ctx.options.repos)) {
    const what = `read ${repo.owner}/${repo.name}`;
    try {
      await client.get(repoPath({ alias, ...repo }), what);
    } catch (e) {
      if (!isIdemError(e)) throw e;
      found.push({ severity: "violation", key: `github.repos.${alias}`, message: e.message });
    }
  }
  return found;
}
