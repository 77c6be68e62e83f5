import { IdemError, type OpenContext, readCappedText } from "@idem/kit";
import { type GitHubAnswer, githubFailure, networkFailure } from "./github-failure.js";
import { nextLink } from "./github-link.js";
import type { GitHubOptions, GitHubRepo } from "./github-options.js";

/** The REST API version every request asks for. */
export const GITHUB_API_VERSION = "2022-11-28";
/** The largest answer read (100 items of 65,536-character bodies fit many times over). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** What a GitHub client needs: its options, the token (from the environment), fetch and a clock. */
export interface GitHubClientParts {
  options: GitHubOptions;
  token: string;
  fetch: typeof fetch;
  now: () => number;
}

/** A query string's values. */
export type Query = Record<string, string | number | boolean>;

/**
 * The few REST calls of the `github.*` kinds over `fetch`: the headers GitHub asks for (a token,
 * a User-Agent, `X-GitHub-Api-Version: 2022-11-28`), a timeout on every request, `Link`
 * pagination that never leaves the configured base URL, and every answer that is not the one
 * expected mapped onto idem's failures (`githubFailure`). The token is only ever a header: no
 * error, detail or log carries it.
 */
export class GitHubClient {
  private readonly base: URL;
  private readonly basePath: string;
  private loginOf: Promise<string> | undefined;
  private readonly defaultBranches = new Map<string, Promise<string>>();

  constructor(private readonly parts: GitHubClientParts) {
    this.base = new URL(parts.options.baseUrl);
    this.basePath = this.base.pathname.replace(/\/+$/, "");
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
   * `fail`). `create` marks a request that may perform something (its network failure says so).
   * @throws IdemError UNAVAILABLE when no complete answer came (see `networkFailure`).
   */
  async send(
    method: "GET" | "POST",
    url: URL,
    what: string,
    o: { body?: unknown; create?: boolean } = {},
  ): Promise<GitHubAnswer> {
    const { timeoutMs, userAgent } = this.parts.options;
    const signal = AbortSignal.timeout(timeoutMs);
    const headers: Record<string, string> = {
      accept: "application/vnd.github+json",
      authorization: `Bearer ${this.parts.token}`,
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
      return { status: res.status, headers: res.headers, body };
    } catch (e) {
      if (e instanceof IdemError) throw e;
      throw networkFailure(e, what, {
        timedOut: signal.aborted,
        mayHavePerformed: o.create === true,
        timeoutMs,
      });
    }
  }

  /**
   * A GET whose answer must be `200` with a JSON body.
   * @throws IdemError from `githubFailure` for any other answer.
   */
  async get(path: string, what: string, query: Query = {}): Promise<unknown> {
    const a = await this.send("GET", this.url(path, query), what);
    if (a.status !== 200 || a.body === undefined) throw this.failure(a, what);
    return a.body;
  }

  /** The failure an unexpected answer stands for (see `githubFailure`). */
  failure(a: GitHubAnswer, what: string): IdemError {
    if (a.status >= 200 && a.status < 300)
      return new IdemError("UNAVAILABLE", `${what}: GitHub answered ${a.status} without JSON`);
    return githubFailure(a, what, this.parts.now());
  }

  /**
   * The pages of a list (`per_page=100`), following `rel="next"` links until there is none or the
   * caller stops. A link must stay under the configured base URL (the token goes only there).
   * @throws IdemError INVALID_CONFIG for a link elsewhere, or past `maxPages`; any failure of `get`.
   */
  async *pages(path: string, query: Query, what: string): AsyncGenerator<unknown[]> {
    let url: URL | undefined = this.url(path, { ...query, per_page: 100 });
    for (let page = 1; url; page++) {
      if (page > this.parts.options.maxPages)
        throw new IdemError(
          "INVALID_CONFIG",
          `${what}: more than maxPages (${this.parts.options.maxPages}) pages of 100; raise maxPages`,
        );
      const a = await this.send("GET", url, what);
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
   * The token's login (`options.login`, else GET /user once per client; a failure is not kept).
   * @throws IdemError from `githubFailure`.
   */
  login(): Promise<string> {
    if (this.parts.options.login) return Promise.resolve(this.parts.options.login);
    const what = "read the token's user (GET /user; an app's token cannot: set the option login)";
    this.loginOf ??= this.get("/user", what).then(
      (u) => {
        const login = (u as { login?: unknown }).login;
        if (typeof login !== "string" || login === "")
          throw new IdemError("UNAVAILABLE", "GET /user answered no login");
        return login;
      },
      (e: unknown) => {
        this.loginOf = undefined;
        throw e;
      },
    );
    return this.loginOf;
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
 * The one client of a process for these options and token, shared by the three `github.*` kinds
 * (one GET /user, one default-branch lookup per repository).
 * @throws IdemError INVALID_CONFIG when the token's variable is unset (naming it, not its value).
 */
export function openGitHubClient(ctx: OpenContext<GitHubOptions>): GitHubClient {
  const token = ctx.env(ctx.options.tokenEnv);
  const id = `github-client:${JSON.stringify(ctx.options)}`;
  return ctx.shared(
    id,
    () =>
      new GitHubClient({
        options: ctx.options,
        token,
        fetch: ctx.fetch,
        now: () => ctx.clock.now(),
      }),
  );
}
