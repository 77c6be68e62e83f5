import type { DoctorContext, KindFinding } from "@idem/kit";
import { isIdemError } from "@idem/kit";
import { GitHubClient, repoPath } from "../../clients/github/github-client.js";
import { githubCredentials } from "../../clients/github/github-credentials.js";
import type { GitHubOptions } from "./github-options.js";

/**
 * `idem doctor`'s check of the config's `github` section (shared by the three `github.*` kinds; the
 * `github.issue` kind runs it): its credentials are there (the token's variable, or the App's
 * key), and with `--network`, who the token is and that `login` is that account (a wrong login
 * makes every probe answer absent and every retry a second item), and that each repository
 * answers. An installation token from `tokenEnv` cannot say who it is: its `login` must at least
 * name a bot, and is checked for good against the first item idem makes.
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
    // Without --network, the interpreter's environment may well differ from doctor's: a warning.
    return [
      {
        severity: ctx.network ? "violation" : "warning",
        key: "github",
        message: `${e.message}: the interpreter needs it`,
      },
    ];
  }
  if (!ctx.network) return found;
  try {
    const who = await client.identity.resolve();
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
