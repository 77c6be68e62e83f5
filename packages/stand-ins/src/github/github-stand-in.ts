import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { listenOnLoopback } from "../listen.js";
import type { GitHubCreate } from "./github-answers.js";
import { GitHubAuth } from "./github-apps.js";
import { createPathMatcher, multiSegmentParams } from "./github-check.js";
import { githubDescription, SERVED_OPERATIONS } from "./github-description.js";
import { Armed, type ArmOptions, type GitHubRequestInfo, RateLimits } from "./github-limits.js";
import {
  type GitHubRequestRecord,
  type GitHubViolation,
  handleGitHubRequest,
  type ServerParts,
} from "./github-server.js";
import { GitHubState, type ItemRecord, type RepoRecord } from "./github-state.js";
import {
  commentViews,
  issueViews,
  pullRequestViews,
  type StandInComment,
  type StandInIssue,
  type StandInPullRequest,
} from "./github-views.js";

export type { StandInComment, StandInIssue, StandInPullRequest };

export interface StartGitHubStandInOptions {
  /**
   * Personal tokens: token -> login of the user it authenticates (they never expire). Default:
   * one token for the user `idem-bot`.
   */
  tokens?: Record<string, string>;
  /** The clock (ms since the epoch) for timestamps, `since`, search lag and rate-limit windows. */
  now?: () => number;
  /** How long after a write the search index shows it (ms). Default 30,000. */
  searchLagMs?: number;
  /** Primary quotas: `core` requests an hour (default 5,000), `search` a minute (default 30). */
  rateLimit?: { core?: number; search?: number };
  /** A path prefix the API lives under, as GitHub Enterprise Server's `/api/v3`. Default none. */
  basePath?: string;
  /** How long a create takes to show in the list endpoints (ms). Default 0. */
  listLagMs?: number;
  /** How long a push (a branch's move) takes to reach the pull requests API (ms). Default 0. */
  pushLagMs?: number;
  /** The port on 127.0.0.1 (`idem stand-in github --port`). Default: one the system picks. */
  port?: number;
}

/** A GitHub App made with `createApp`, installed on one account. */
export interface StandInApp {
  appId: number;
  installationId: number;
  /** The App's private key, PKCS#8 PEM, as GitHub lets its owner download it. */
  privateKey: string;
  /** Its bot's login, `<slug>[bot]`: the author of what its installation tokens make. */
  login: string;
}

/**
 * A GitHub REST API stand-in on 127.0.0.1, driven by GitHub's own OpenAPI description: see
 * packages/stand-ins/README.md for what it serves and how faithfully.
 */
export interface GitHubStandIn extends AsyncDisposable {
  /** The API base URL (`http://127.0.0.1:<port>`, plus the base path when one is set). */
  readonly url: string;
  /** A token the stand-in accepts (the first of `tokens`), and the login it authenticates. */
  readonly token: string;
  readonly login: string;
  /** The `info.version` of the GitHub description in use. */
  readonly descriptionVersion: string;

  /** Makes a GitHub App (an RSA key pair) and installs it on `owner` (default: `acme`). */
  createApp(options: { slug: string; name?: string; owner?: string }): StandInApp;
  /** Makes a new personal token for `login` (default: the stand-in's `login`); answers it. */
  addToken(login?: string): string;
  /** Revokes a token at once (a personal token, or an installation token). */
  revokeToken(token: string): void;
  /** Installation tokens minted so far. */
  installationTokensMinted(): number;
  /** The installation tokens minted so far, oldest first (to revoke one). */
  installationTokens(): string[];
  /** Requests refused because their token had expired or was revoked. */
  expiredTokenRefusals(): number;
  /** Requests refused by GitHub's limits on content creation (80 a minute, 500 an hour). */
  contentRateLimitRefusals(): number;
  /** Changes the lists' read-after-write lag. */
  setListLag(ms: number): void;
  /** Changes the lag between a push and the pull requests API. */
  setPushLag(ms: number): void;
  /** Adds a repository; its default branch (`main`) exists unless `gitDir` provides branches. */
  createRepo(options: {
    owner: string;
    name: string;
    defaultBranch?: string;
    /** Branch names, or name -> SHA (a SHA is made up when omitted). */
    branches?: Record<string, string | undefined> | string[];
    /** A bare git repository whose `refs/heads/*` are the branches (a git daemon's repo). */
    gitDir?: string;
    /**
     * Branches that exist as soon as a request names them, each with a commit of its own, as if a
     * git effect had pushed them just before (a conformance drill's heads, whose names it draws).
     */
    pushedOnDemand?: (name: string) => boolean;
  }): { id: number; fullName: string };
  /** Creates or moves a branch; answers its SHA. */
  setBranch(owner: string, repo: string, branch: string, sha?: string): string;
  /** Adds an issue directly (no request, not counted as a create); answers its number. */
  addIssue(owner: string, repo: string, fields: SeedItem): number;
  /** Adds a pull request directly from `head` (a branch that must exist) into `base`. */
  addPullRequest(
    owner: string,
    repo: string,
    fields: SeedItem & { head: string; base?: string },
  ): number;
  /** Adds a comment directly to issue or pull request `number`; answers its id. */
  addComment(
    owner: string,
    repo: string,
    number: number,
    fields: { body: string; user?: string; createdAt?: number },
  ): number;
  /** Closes or reopens issue or pull request `number`. */
  setState(owner: string, repo: string, number: number, state: "open" | "closed"): void;

  pullRequests(owner: string, repo: string): StandInPullRequest[];
  issues(owner: string, repo: string): StandInIssue[];
  comments(owner: string, repo: string, number?: number): StandInComment[];
  /** Creates performed through the API, per kind (those whose answer was dropped too). */
  creates(): Record<GitHubCreate["kind"], number>;
  /** Every request received, in order. */
  requests(): readonly GitHubRequestRecord[];
  /** Requests that do not match GitHub's description (or that GitHub refuses), and answers. */
  violations(): readonly GitHubViolation[];
  /** @throws Error listing every violation, when there is one. */
  assertNoViolations(): void;
  /** Requests refused by a rate limit so far. */
  rateLimitRefusals(): number;

  /** The next creates (or those `match` picks) are performed, then the connection is dropped. */
  dropAfterCreate(options?: ArmOptions<GitHubCreate>): void;
  /** The next creates are not performed: the connection is dropped first. */
  dropBeforeCreate(options?: ArmOptions<GitHubCreate>): void;
  /**
   * Uses up the primary quota: 403 (or `status` 429) with `x-ratelimit-remaining: 0` until the
   * reset time, `resetInSeconds` (default 1) from now, rounded up to a whole second.
   */
  exhaustRateLimit(options?: {
    resource?: "core" | "search";
    resetInSeconds?: number;
    status?: 403 | 429;
  }): void;
  /** The next requests are refused by a secondary limit (403 or 429 with `retry-after`). */
  secondaryRateLimit(
    options?: ArmOptions<GitHubRequestInfo> & { status?: 403 | 429; retryAfterSeconds?: number },
  ): void;
  /** The next requests are answered a server error (nothing performed). */
  failNext(options: ArmOptions<GitHubRequestInfo> & { status: 500 | 502 | 503 }): void;
  /** Changes the search index's lag. */
  setSearchLag(ms: number): void;
  /** Stops the server (open connections closed). Idempotent. */
  stop(): Promise<void>;
}

/** The fields of an issue or pull request added with `addIssue`/`addPullRequest`. */
export interface SeedItem {
  title: string;
  body?: string | null;
  /** The author's login; default the stand-in's `login`. */
  user?: string;
  state?: "open" | "closed";
  labels?: string[];
  /** When it was created (ms); default now. */
  createdAt?: number;
}

const DEFAULT_TOKEN = "ghp_standin0000000000000000000000000000";

/**
 * Starts a GitHub REST stand-in on 127.0.0.1 at `port` (default: a free one). Makes GitHub's
 * description checkable on first use in the process (a few hundred ms).
 * @throws Error EADDRINUSE when `port` is taken.
 */
export async function startGitHubStandIn(
  options: StartGitHubStandInOptions = {},
): Promise<GitHubStandIn> {
  const description = githubDescription();
  const now = options.now ?? Date.now;
  const tokens = options.tokens ?? { [DEFAULT_TOKEN]: "idem-bot" };
  const [token, login] = Object.entries(tokens)[0] ?? [];
  if (!token || !login) throw new Error("startGitHubStandIn needs at least one token");
  const state = new GitHubState(now);
  const auth = new GitHubAuth(now, (l) => state.user(l));
  for (const [t, l] of Object.entries(tokens)) auth.tokens.set(t, { login: l, kind: "user" });
  const basePath = (options.basePath ?? "").replace(/\/+$/, "");
  let origin = "";
  const parts: ServerParts = {
    state,
    description,
    match: createPathMatcher(description, multiSegmentParams(description, SERVED_OPERATIONS)),
    limits: new RateLimits(
      now,
      { core: options.rateLimit?.core ?? 5000, search: options.rateLimit?.search ?? 30 },
      () => state.user(login).id,
    ),
    auth,
    now,
    basePath,
    bases: () => ({ api: `${origin}${basePath}`, html: origin }),
    searchLagMs: options.searchLagMs ?? 30_000,
    listLagMs: options.listLagMs ?? 0,
    pushLagMs: options.pushLagMs ?? 0,
    expiredTokens: 0,
    dropBefore: new Armed(),
    dropAfter: new Armed(),
    failures: new Armed(),
    creates: { pull_request: 0, issue: 0, comment: 0, ref: 0 },
    requests: [],
    violations: [],
  };
  const server = createServer((req, res) => {
    void handleGitHubRequest(parts, req, res);
  });
  const port = await listenOnLoopback(server, options.port ?? 0);
  origin = `http://127.0.0.1:${port}`;

  const repoOf = (owner: string, name: string): RepoRecord => {
    const r = state.repo(owner, name);
    if (!r) throw new Error(`the stand-in has no repository ${owner}/${name}`);
    return r;
  };
  const itemOf = (owner: string, name: string, number: number): ItemRecord => {
    const item = repoOf(owner, name).items.get(number);
    if (!item) throw new Error(`${owner}/${name} has no issue or pull request #${number}`);
    return item;
  };
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return stopped;
  };
  return {
    url: `${origin}${basePath}`,
    token,
    login,
    descriptionVersion: description.version,
    createApp(o) {
      const { app, privateKey } = auth.createApp({ ...o, owner: o.owner ?? "acme" });
      const inst = auth.install(app, o.owner ?? "acme");
      return { appId: app.id, installationId: inst.id, privateKey, login: `${app.slug}[bot]` };
    },
    addToken(l = login) {
      const t = `ghp_${randomBytes(18).toString("hex")}`;
      auth.tokens.set(t, { login: l, kind: "user" });
      return t;
    },
    revokeToken: (t) => auth.revoke(t),
    installationTokensMinted: () => auth.minted,
    installationTokens: () =>
      [...auth.tokens].flatMap(([t, r]) => (r.kind === "installation" ? [t] : [])),
    expiredTokenRefusals: () => parts.expiredTokens,
    contentRateLimitRefusals: () => parts.limits.contentRefusals,
    setListLag(ms) {
      parts.listLagMs = ms;
    },
    setPushLag(ms) {
      parts.pushLagMs = ms;
    },
    createRepo(o) {
      const r = state.createRepo(o);
      return { id: r.id, fullName: `${r.owner.login}/${r.name}` };
    },
    setBranch: (owner, name, branch, sha) => state.setBranch(repoOf(owner, name), branch, sha),
    addIssue(owner, name, f) {
      const fields: Parameters<GitHubState["addItem"]>[1] = {
        ...f,
        user: state.user(f.user ?? login),
      };
      return state.addItem(repoOf(owner, name), fields).number;
    },
    addPullRequest(owner, name, f) {
      const repo = repoOf(owner, name);
      const base = f.base ?? repo.defaultBranch;
      const headSha = state.branchSha(repo, f.head);
      const baseSha = state.branchSha(repo, base);
      if (!headSha || !baseSha) throw new Error(`${owner}/${name} lacks ${f.head} or ${base}`);
      const pull = {
        headRef: f.head,
        headSha,
        baseRef: base,
        baseSha,
        draft: false,
        maintainerCanModify: true,
      };
      return state.addItem(repo, { ...f, user: state.user(f.user ?? login), pull }).number;
    },
    addComment(owner, name, number, f) {
      const repo = repoOf(owner, name);
      const fields = { ...f, user: state.user(f.user ?? login) };
      return state.addComment(repo, itemOf(owner, name, number), fields).id;
    },
    setState: (owner, name, number, s) => state.setItemState(itemOf(owner, name, number), s),
    pullRequests: (owner, name) => pullRequestViews(repoOf(owner, name)),
    issues: (owner, name) => issueViews(repoOf(owner, name)),
    comments: (owner, name, number) => commentViews(repoOf(owner, name), number),
    creates: () => ({ ...parts.creates }),
    requests: () => [...parts.requests],
    violations: () => [...parts.violations],
    assertNoViolations() {
      if (parts.violations.length === 0) return;
      const lines = parts.violations.map(
        (v) =>
          `${v.side} ${v.method} ${v.path} (${v.operation ?? "no operation"}) -> ${v.status}: ${v.problems.join("; ")}`,
      );
      throw new Error(`the GitHub stand-in saw ${lines.length} violation(s):\n${lines.join("\n")}`);
    },
    rateLimitRefusals: () => parts.limits.refusals,
    dropAfterCreate: (o = {}) => parts.dropAfter.arm(o),
    dropBeforeCreate: (o = {}) => parts.dropBefore.arm(o),
    exhaustRateLimit: (o = {}) =>
      parts.limits.exhaust(o.resource ?? "core", o.resetInSeconds ?? 1, o.status),
    secondaryRateLimit: (o = {}) =>
      parts.limits.secondary.arm(o, {
        status: o.status ?? 403,
        retryAfterSeconds: o.retryAfterSeconds ?? 1,
      }),
    failNext: (o) => parts.failures.arm(o, o.status),
    setSearchLag(ms) {
      parts.searchLagMs = ms;
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
