import { type Clock, fail, IdemError, type OpenContext, readCappedText, sleepOn } from "@idem/kit";
import type { GitHubOptions, GitHubRepo } from "../../kinds/github/github-options.js";
import { RateWaits } from "../rate-waits.js";
import { type GitHubCredentials, githubCredentials } from "./github-credentials.js";
import {
  type GitHubAnswer,
  githubFailure,
  isRateLimited,
  networkFailure,
  rateLimitedWait,
} from "./github-failure.js";
import { GitHubIdentity } from "./github-identity.js";
import { nextLink } from "./github-link.js";
import { CreatePacer } from "./github-pacing.js";

/** The REST API version every request asks for. */
export const GITHUB_API_VERSION = "2022-11-28";
/** The largest answer read (100 items of 65,536-character bodies fit many times over). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** What a GitHub client needs: its options, its credentials, fetch and a clock. */
export interface GitHubClientParts {
  options: GitHubOptions;
  credentials: GitHubCredentials;
  fetch: typeof fetch;
  clock: Clock;
}

/** What one request is, beside its method and URL. */
export interface SendOptions {
  body?: unknown;
  /** A create: paced (GitHub's limits on content creation), and its lost answer remembered. */
  create?: boolean;
  /** The effect key the request is for: its rate-limit waits share one deadline. */
  scope?: string;
  /** An `Authorization` of its own (an App's JWT), instead of the token. */
  authorization?: string;
}

/** A query string's values. */
export type Query = Record<string, string | number | boolean>;

/**
 * The few REST calls of the `github.*` kinds over `fetch`: the headers GitHub asks for (a token,
 * a User-Agent, `X-GitHub-Api-Version: 2022-11-28`), a timeout on every request, `Link`
 * pagination that never leaves the configured base URL, and every answer that is not the one
 * expected mapped onto idem's failures (`githubFailure`). The token is only ever a header: no
 * error, detail or log carries it.
 *
 * As GitHub asks of a client: a token GitHub refuses (401) is renewed once (read again, or minted
 * again) before the refusal stands; a rate limit is waited out (`retry-after`, the reset, else a
 * minute), within `rateLimitWaitMs` per effect; creates are paced to a second apart, 80 a minute
 * and 500 an hour; and a probe right after a create whose answer was lost waits `readLagMs` for
 * the lists to show it.
 */
export class GitHubClient {
  private readonly base: URL;
  private readonly basePath: string;
  private readonly defaultBranches = new Map<string, Promise<string>>();
  private readonly pacer = new CreatePacer();
  private readonly waits: RateWaits;
  /** When a create's answer was lost, by effect key (its next probe waits for the lists). */
  private readonly lost = new Map<string, number>();
  /** Who the token is, checked (see GitHubIdentity). */
  readonly identity: GitHubIdentity;

  constructor(private readonly parts: GitHubClientParts) {
    this.base = new URL(parts.options.baseUrl);
    this.basePath = this.base.pathname.replace(/\/+$/, "");
    this.waits = new RateWaits(parts.clock, parts.options.rateLimitWaitMs);
    this.identity = new GitHubIdentity(this, parts.options, parts.credentials);
  }

  get options(): GitHubOptions {
    return this.parts.options;
  }

  /** The URL of an API path (`/repos/o/r/pulls`) with its query. */
  url(path: string, query: Query = {}): URL {
    const url = new URL(`${this.base.origin}${this.basePath}${path}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
    return url;
  }

  /**
   * One request; answers whatever status GitHub gives (the caller maps the unexpected ones with
   * `fail`), after renewing a refused token once and waiting out rate limits within the effect's
   * deadline. A create is paced first.
   * @throws IdemError UNAVAILABLE when no complete answer came (see `networkFailure`), or when a
   * rate limit's wait would pass the effect's deadline (with the wait, as `retryAfterMs`).
   */
  async send(
    method: "GET" | "POST",
    url: URL,
    what: string,
    o: SendOptions = {},
  ): Promise<GitHubAnswer> {
    const scope = o.scope ?? "";
    if (o.create) await this.paced(scope, what);
    let token = o.authorization ?? (await this.parts.credentials.token());
    let renewed = o.authorization !== undefined;
    for (;;) {
      const a = await this.once(method, url, what, token, o);
      if (a.status === 401 && !renewed) {
        renewed = true;
        const next = await this.parts.credentials.renew(token);
        if (next !== undefined) {
          token = next;
          continue;
        }
      }
      if (isRateLimited(a)) {
        const wait = rateLimitedWait(a, this.parts.clock.now());
        if (await this.waits.wait(scope, wait)) continue;
      }
      return a;
    }
  }

  /** Reserves the create's time and waits for it, within the effect's deadline. */
  private async paced(scope: string, what: string): Promise<void> {
    const now = this.parts.clock.now();
    const at = this.pacer.reserve(now);
    if (at <= now || (await this.waits.wait(scope, at - now))) return;
    this.pacer.release(at);
    throw fail.transient(
      `${what}: held back to keep GitHub's limits on content creation (80 a minute, 500 an hour per token) past rateLimitWaitMs`,
      { retryAfterMs: at - now },
    );
  }

  /** The request itself, once. */
  private async once(
    method: "GET" | "POST",
    url: URL,
    what: string,
    token: string,
    o: SendOptions,
  ): Promise<GitHubAnswer> {
    const { timeoutMs, userAgent } = this.parts.options;
    const signal = AbortSignal.timeout(timeoutMs);
    const headers: Record<string, string> = {
      accept: "application/vnd.github+json",
      authorization: o.authorization ?? `Bearer ${token}`,
      "user-agent": userAgent,
      "x-github-api-version": GITHUB_API_VERSION,
    };
    if (o.body !== undefined) headers["content-type"] = "application/json; charset=utf-8";
    try {
      const res = await this.parts.fetch(url, {
        method,
        headers,
        signal,
        redirect: "manual",
        ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
      });
      const text = await readCappedText(res, MAX_ANSWER_BYTES, "GitHub's answer");
      let body: unknown;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch (e) {
          if (!(e instanceof SyntaxError)) throw e;
          body = undefined;
        }
      }
      return { status: res.status, headers: res.headers, body, sent: [headers.authorization] };
    } catch (e) {
      if (e instanceof IdemError) throw e;
      if (o.create && o.scope !== undefined) this.lost.set(o.scope, this.parts.clock.now());
      throw networkFailure(e, what, {
        timedOut: signal.aborted,
        mayHavePerformed: o.create === true,
        timeoutMs,
      });
    }
  }

  /**
   * Before a probe of `scope`: when a create of it lost its answer in this process less than
   * `readLagMs` ago, waits out the rest, so the lists show what that create made.
   */
  async settled(scope: string): Promise<void> {
    const at = this.lost.get(scope);
    if (at === undefined) return;
    this.lost.delete(scope);
    const left = at + this.parts.options.readLagMs - this.parts.clock.now();
    if (left > 0) await sleepOn(this.parts.clock, left);
  }

  /**
   * A GET whose answer must be `200` with a JSON body.
   * @throws IdemError from `githubFailure` for any other answer.
   */
  async get(path: string, what: string, query: Query = {}, scope?: string): Promise<unknown> {
    const a = await this.send(
      "GET",
      this.url(path, query),
      what,
      scope === undefined ? {} : { scope },
    );
    if (a.status !== 200 || a.body === undefined) throw this.failure(a, what);
    return a.body;
  }

  /** The failure an unexpected answer stands for (see `githubFailure`). */
  failure(a: GitHubAnswer, what: string): IdemError {
    if (a.status >= 200 && a.status < 300)
      return new IdemError("UNAVAILABLE", `${what}: GitHub answered ${a.status} without JSON`);
    return githubFailure(a, what, this.parts.clock.now());
  }

  /**
   * The pages of a list (`per_page=100`), following `rel="next"` links until there is none or the
   * caller stops. A link must stay under the configured base URL (the token goes only there).
   * @throws IdemError INVALID_CONFIG for a link elsewhere, or past `maxPages`; any failure of `get`.
   */
  async *pages(
    path: string,
    query: Query,
    what: string,
    scope?: string,
  ): AsyncGenerator<unknown[]> {
    let url: URL | undefined = this.url(path, { ...query, per_page: 100 });
    for (let page = 1; url; page++) {
      if (page > this.parts.options.maxPages)
        throw new IdemError(
          "INVALID_CONFIG",
          `${what}: more than maxPages (${this.parts.options.maxPages}) pages of 100; raise maxPages`,
        );
      const a = await this.send("GET", url, what, scope === undefined ? {} : { scope });
      if (a.status !== 200 || !Array.isArray(a.body)) throw this.failure(a, what);
      yield a.body;
      const next = nextLink(a.headers.get("link"));
      url = next === undefined ? undefined : this.within(next, what);
    }
  }

  /** A link GitHub gave, if it stays under the base URL. @throws IdemError INVALID_CONFIG */
  private within(link: string, what: string): URL {
    let url: URL | undefined;
    try {
      url = new URL(link, this.base);
    } catch {
      url = undefined;
    }
    const under =
      url !== undefined &&
      url.origin === this.base.origin &&
      !url.username &&
      !url.password &&
      (this.basePath === "" || url.pathname.startsWith(`${this.basePath}/`));
    if (!url || !under)
      throw new IdemError(
        "INVALID_CONFIG",
        `${what}: GitHub's next page is not under the configured baseUrl ${this.base.origin}${this.basePath}; set baseUrl to the API's own address`,
      );
    return url;
  }

  /**
   * The token's login, checked (see GitHubIdentity).
   * @throws IdemError INVALID_CONFIG when the configured login is not the token's.
   */
  async login(): Promise<string> {
    return (await this.identity.resolve()).login;
  }

  /** A repository's default branch (GET /repos/{owner}/{repo} once per repository). */
  defaultBranch(repo: GitHubRepo): Promise<string> {
    const id = `${repo.owner}/${repo.name}`.toLowerCase();
    let p = this.defaultBranches.get(id);
    if (!p) {
      p = this.get(repoPath(repo), `read ${repo.owner}/${repo.name}`).then(
        (r) => {
          const b = (r as { default_branch?: unknown }).default_branch;
          if (typeof b !== "string" || b === "")
            throw new IdemError("UNAVAILABLE", `${id} has no default_branch`);
          return b;
        },
        (e: unknown) => {
          this.defaultBranches.delete(id);
          throw e;
        },
      );
      this.defaultBranches.set(id, p);
    }
    return p;
  }
}

/** `/repos/{owner}/{name}` (both checked by the options schema; encoded anyway). */
export function repoPath(repo: GitHubRepo): string {
  return `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`;
}

/**
 * The one client of a process for these options, shared by the three `github.*` kinds (one
 * identity check, one default-branch lookup per repository, one pacing of creates per token).
 * @throws IdemError INVALID_CONFIG when the token's variable (or the App's key) is not there,
 * naming it, never its value.
 */
export function openGitHubClient(ctx: OpenContext<GitHubOptions>): GitHubClient {
  const credentials = githubCredentials(ctx);
  const id = `github-client:${JSON.stringify(ctx.options)}`;
  return ctx.shared(
    id,
    () =>
      new GitHubClient({ options: ctx.options, credentials, fetch: ctx.fetch, clock: ctx.clock }),
  );
}
