import { readFileSync } from "node:fs";
import { fail, type OpenContext } from "@idem/kit";

/** What reading credentials needs of a kind's context (open's, or doctor's). */
type CredentialsContext = Pick<OpenContext<GitHubOptions>, "env" | "options" | "clock" | "fetch">;

import { IdemError } from "@idem/kit";
import type { GitHubOptions } from "../../kinds/github/github-options.js";

/**
 * Where the `github.*` kinds' token comes from, and how a new one is had when GitHub refuses the
 * current one (a 401): read again from the environment (a rotated secret), or, for a GitHub App,
 * an installation token minted with the App's key and minted again before it expires. The token,
 * the key and the JWT are only ever a header: no error, detail or log carries them.
 */
export interface GitHubCredentials {
  /** `token`: a token from the environment; `app`: a GitHub App's installation tokens. */
  readonly kind: "token" | "app";
  /** The token to send now. @throws IdemError INVALID_CONFIG (unset, refused key), UNAVAILABLE */
  token(): Promise<string>;
  /**
   * After GitHub refused `refused` (401): a different token to try once, or undefined when there
   * is none (the 401 stands: INVALID_CONFIG). @throws IdemError as `token`
   */
  renew(refused: string): Promise<string | undefined>;
  /** An App's JWT, for `GET /app` (its slug names its bot). Only for `kind: "app"`. */
  appJwt?(): Promise<string>;
}

/** An installation token is minted again this long before GitHub says it expires. */
export const TOKEN_REFRESH_MARGIN_MS = 5 * 60_000;

/** A token read from the environment variable `tokenEnv`, read again after a 401. */
function envToken(read: () => string): GitHubCredentials {
  let current: string | undefined;
  return {
    kind: "token",
    token: async () => {
      current ??= read();
      return current;
    },
    async renew(refused) {
      const now = read();
      if (now === refused) return undefined;
      current = now;
      return now;
    },
  };
}

/** The App's private key: from the environment (PEM, `\n` escapes allowed) or a file. */
function privateKey(app: NonNullable<GitHubOptions["app"]>, ctx: CredentialsContext) {
  if (app.privateKeyEnv !== undefined) return ctx.env(app.privateKeyEnv).replace(/\\n/g, "\n");
  // Absolute: the kind's resolveOptions made it so against the config's folder.
  const path = app.privateKeyFile as string;
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new IdemError(
      "INVALID_CONFIG",
      `github.app.privateKeyFile ${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? "error"})`,
      { details: { field: "github.app.privateKeyFile" } },
    );
  }
}

/** The messages GitHub answers a JWT whose times its clock refuses (as @octokit/auth-app reads them). */
const SKEW = [
  /'Expiration time' claim \('exp'\) is too far in the future/,
  /'Expiration time' claim \('exp'\) must be a numeric value representing the future time/,
  /'Issued at' claim \('iat'\) must be an Integer representing the time that the assertion was issued/,
];

interface RequestFailure {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | undefined> };
}

/**
 * What a failed mint means, without its request (which holds the JWT): GitHub refusing the App's
 * key, id or installation is the config's; no answer or a 5xx is transient.
 */
function mintFailure(e: unknown, what: string): IdemError {
  const f = (typeof e === "object" && e !== null ? e : {}) as RequestFailure;
  const said = String(f.message ?? "")
    .replace(/[\x00-\x1f\x7f]+/g, " ")
    .slice(0, 200);
  if (typeof f.status === "number" && f.status >= 400 && f.status < 500 && f.status !== 429)
    return new IdemError(
      "INVALID_CONFIG",
      `${what}: GitHub answered ${f.status} (${said}); check github.app (appId, installationId, the private key)`,
      { details: { status: f.status, field: "github.app" } },
    );
  if (typeof f.status !== "number" && /key|PEM|asn1|decoder/i.test(said))
    return new IdemError(
      "INVALID_CONFIG",
      `${what}: the App's private key cannot be used (${said}); github.app.privateKeyEnv or privateKeyFile must hold the PEM GitHub gave`,
      { details: { field: "github.app" } },
    );
  return fail.transient(`${what}: ${said || "no answer"}`, {
    ...(typeof f.status === "number" ? { details: { status: f.status } } : {}),
  });
}

/**
 * A GitHub App's installation tokens (`@octokit/auth-app`): minted with a JWT signed by the App's
 * key, cached, minted again `TOKEN_REFRESH_MARGIN_MS` before their `expires_at` on idem's clock,
 * and at once after a 401 (GitHub expired or revoked it sooner). A JWT GitHub's clock refuses is
 * made again with the difference its `Date` header shows, as @octokit/auth-app does on its own
 * requests.
 */
function appTokens(
  app: NonNullable<GitHubOptions["app"]>,
  ctx: CredentialsContext,
): GitHubCredentials {
  const key = privateKey(app, ctx);
  // Loaded on first use, as the SQL kind's drivers: a config without an App never loads them.
  const libraries = Promise.all([import("@octokit/auth-app"), import("@octokit/request")]);
  type Auth = ReturnType<typeof import("@octokit/auth-app")["createAppAuth"]>;
  const make = async (timeDifference: number): Promise<Auth> => {
    const [{ createAppAuth }, { request }] = await libraries;
    return createAppAuth({
      appId: app.appId,
      privateKey: key,
      installationId: app.installationId,
      request: request.defaults({
        baseUrl: ctx.options.baseUrl.replace(/\/+$/, ""),
        headers: { "user-agent": ctx.options.userAgent, "x-github-api-version": "2022-11-28" },
        request: { fetch: ctx.fetch },
      }),
      log: { warn: () => {} },
      ...(timeDifference === 0 ? {} : { timeDifference }),
    });
  };
  let auth: Promise<Auth> | undefined;
  /**
   * Runs `op` with the App's auth; once more with GitHub's clock when GitHub refused the JWT's
   * times (the JWT's times are the signing library's, on the real clock: GitHub's `Date` shows
   * the difference).
   */
  const withSkew = async <T>(op: (a: Auth) => Promise<T>, what: string): Promise<T> => {
    auth ??= make(0);
    try {
      return await op(await auth);
    } catch (e) {
      const f = e as RequestFailure;
      const date = f.response?.headers?.date;
      if (f.status !== 401 || !SKEW.some((re) => re.test(String(f.message))) || !date)
        throw mintFailure(e, what);
      const diff = Math.floor((Date.parse(date) - Date.now()) / 1000);
      auth = make(Number.isFinite(diff) ? diff : 0);
      try {
        return await op(await auth);
      } catch (again) {
        throw mintFailure(again, what);
      }
    }
  };
  const what = `mint an installation token for GitHub App ${app.appId} (installation ${app.installationId})`;
  const mint = (refresh: boolean) =>
    withSkew((a) => a({ type: "installation", ...(refresh ? { refresh: true } : {}) }), what);
  /** The token last minted by a refresh: never refreshed again for being near its expiry. */
  let refreshed: string | undefined;
  return {
    kind: "app",
    async token() {
      const a = await mint(false);
      const left = Date.parse(a.expiresAt) - ctx.clock.now();
      if (a.token === refreshed || !(left < TOKEN_REFRESH_MARGIN_MS)) return a.token;
      const fresh = await mint(true);
      refreshed = fresh.token;
      return fresh.token;
    },
    async renew(refused) {
      const fresh = await mint(true);
      refreshed = fresh.token;
      return fresh.token === refused ? undefined : fresh.token;
    },
    async appJwt() {
      const a = await withSkew((x) => x({ type: "app" }), `sign a JWT for GitHub App ${app.appId}`);
      return a.token;
    },
  };
}

/**
 * The credentials the options name: `app` (a GitHub App's installation), else the token in the
 * environment variable `tokenEnv`.
 * @throws IdemError INVALID_CONFIG when the variable, or the App's key, is not there.
 */
export function githubCredentials(ctx: CredentialsContext): GitHubCredentials {
  const app = ctx.options.app;
  if (app) return appTokens(app, ctx);
  const read = () => ctx.env(ctx.options.tokenEnv);
  read();
  return envToken(read);
}
