import { isAbsolute, resolve } from "node:path";
import { isSafeBranchName } from "@idem/git";
import { aliasOf, invalid, type OptionsSource, refuseKeyMarkers } from "@idem/kit";
import { z } from "zod";

/**
 * The options of the `github.*` kinds (the config's `github` section, shared by
 * `github.pull_request`, `github.issue` and `github.comment`; docs/kinds/github.md): where the API is, the NAME of the
 * environment variable holding the token (never the token), and the repositories agents may name,
 * by alias. Nothing an agent sends reaches a repository these options do not list.
 */
export const GitHubOptionsSchema = z.strictObject({
  /** `https://api.github.com`, or a GitHub Enterprise Server's `https://<host>/api/v3`. */
  baseUrl: z
    .url({ protocol: /^https?$/ })
    .refine((u) => {
      const url = new URL(u);
      return !url.username && !url.password && !url.search && !url.hash;
    }, "must be a plain http(s) URL without credentials, query or fragment")
    .default("https://api.github.com"),
  /**
   * The environment variable holding the token (a personal access token, or an installation token
   * another tool mints): read again after GitHub refuses it (401), so a rotated secret is picked up.
   * Not read when `app` is set.
   */
  tokenEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be an environment variable name")
    .default("GITHUB_TOKEN"),
  /**
   * A GitHub App whose installation tokens idem mints itself (`@octokit/auth-app`), and mints again
   * before they expire: its App ID, the installation on the repositories' owner, and its private
   * key from an environment variable or a file (relative to the config's folder).
   */
  app: z
    .strictObject({
      appId: z.union([z.number().int().min(1), z.string().regex(/^\d{1,20}$/, "must be a number")]),
      installationId: z.number().int().min(1),
      privateKeyEnv: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be an environment variable name")
        .optional(),
      privateKeyFile: z.string().min(1).max(4096).optional(),
    })
    .refine(
      (a) => (a.privateKeyEnv === undefined) !== (a.privateKeyFile === undefined),
      "needs exactly one of privateKeyEnv and privateKeyFile",
    )
    .optional(),
  /**
   * The token's login. Checked before anything is made: GET /user for a personal token, the App's
   * slug (`<slug>[bot]`) with `app`; an installation token from `tokenEnv` cannot be asked who it
   * is, so it needs this (`my-app[bot]`), and it is checked against the author of the first item
   * idem makes or finds. Probes count only items this account made.
   */
  login: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$/, "must be a GitHub login")
    .optional(),
  /** Repository aliases agents name: `{ "app": { "owner": "acme", "name": "app" } }`. */
  repos: z
    .record(
      z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be an alias (A-Z a-z 0-9 _ . -)"),
      z.strictObject({
        owner: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, "must be a GitHub owner"),
        name: z
          .string()
          .regex(/^[A-Za-z0-9._-]{1,100}$/, "must be a repository name")
          .refine((n) => n !== "." && n !== "..", "must be a repository name"),
      }),
    )
    .refine((r) => Object.keys(r).length > 0, "must name at least one repository"),
  /** One request's bound, the answer's body included. */
  timeoutMs: z.number().int().min(1000).max(600_000).default(30_000),
  /**
   * How far GitHub's clock may be behind idem's: a probe lists from the output's recording time
   * minus this (GitHub's timestamps have whole seconds; one more second is always taken off).
   */
  clockSkewMs: z.number().int().min(0).max(86_400_000).default(300_000),
  /** The most pages (100 items each) one probe or scan reads before it gives up. */
  maxPages: z.number().int().min(1).max(1000).default(50),
  /** How far back `scan` (audit, the drill) looks, from now. */
  scanWindowMs: z
    .number()
    .int()
    .min(60_000)
    .max(366 * 86_400_000)
    .default(7 * 86_400_000),
  userAgent: z.string().min(1).max(200).default("idem"),
  /**
   * How long an effect's probes and applies may wait on GitHub's rate limits (and idem's own pacing
   * of creates), counted from its first wait in this process: a rate limit costs time, not an
   * attempt. Past it, a rate limit fails the attempt (transient, retried no sooner than GitHub says).
   */
  rateLimitWaitMs: z.number().int().min(0).max(21_600_000).default(600_000),
  /**
   * How long a pull request whose head GitHub does not see yet ("No commits between", an invalid
   * head) is tried again: a push reaches the pull requests API only a moment later.
   */
  pushLagMs: z.number().int().min(0).max(600_000).default(15_000),
  /**
   * How long after a create whose answer was lost the next probe of that effect waits first: a
   * list endpoint shows a write only a moment later (read-after-write lag), and a probe that reads
   * it too soon would answer absent and make a second item.
   */
  readLagMs: z.number().int().min(0).max(600_000).default(5_000),
});
/** Parsed GitHubOptionsSchema. */
export type GitHubOptions = z.infer<typeof GitHubOptionsSchema>;

/** The options with the App's `privateKeyFile` absolute against the config's folder (again: unchanged). */
export function resolveGitHubOptions(o: GitHubOptions, source: OptionsSource): GitHubOptions {
  const file = o.app?.privateKeyFile;
  if (o.app === undefined || file === undefined || isAbsolute(file)) return o;
  return { ...o, app: { ...o.app, privateKeyFile: resolve(source.dir, file) } };
}

/** GitHub's limit on an issue, pull request or comment body, in characters. */
export const GITHUB_MAX_BODY = 65_536;
/** What an agent's body may hold: GitHub's limit less the key marker idem appends (under 160). */
export const MAX_AGENT_BODY = GITHUB_MAX_BODY - 256;

/** A repository alias as a spec names it. */
export const repoAlias = z.string().min(1).max(64);
/** A title: one line of text, not blank. */
export const title = z
  .string()
  .min(1)
  .max(256)
  .refine((t) => t.trim() !== "", "must not be blank")
  .refine((t) => !/[\r\n\0]/.test(t), "must be one line without NUL");
/** A body as the agent writes it (Markdown); idem appends the key marker. */
export const body = z
  .string()
  .max(MAX_AGENT_BODY)
  .refine((b) => !b.includes("\0"), "has NUL");
/** A branch name git and GitHub accept (git check-ref-format, no `:`, no leading `-`). */
export const branch = z
  .string()
  .min(1)
  .max(200)
  .refine(isSafeBranchName, "is not a safe branch name (git check-ref-format, no leading -)");

/** A repository named by its alias. */
export interface GitHubRepo {
  alias: string;
  owner: string;
  name: string;
}

/**
 * The repository an alias names in the options.
 * @throws IdemError INVALID_INPUT naming `repo`, listing the configured aliases.
 */
export function githubRepo(options: GitHubOptions, alias: string): GitHubRepo {
  const r = aliasOf(options.repos, alias);
  if (!r) {
    const known = Object.keys(options.repos).join(", ");
    return invalid("repo", `${JSON.stringify(alias)} is not a configured GitHub repo (${known})`);
  }
  return { alias, owner: r.owner, name: r.name };
}

/**
 * The checks every `github.*` spec gets before record: its repo is configured and its body
 * carries no key marker of its own (one for another key would make that effect's probe answer
 * present). @throws IdemError INVALID_INPUT naming the field.
 */
export function checkGitHubSpec(
  spec: { repo: string; body?: string | undefined },
  options: GitHubOptions,
): void {
  refuseKeyMarkers("body", spec.body);
  githubRepo(options, spec.repo);
}

/**
 * The time a probe lists from: the recording time less the clock skew allowed and one more
 * second (GitHub keeps whole seconds), as GitHub's ISO 8601 `YYYY-MM-DDTHH:MM:SSZ`, with its ms.
 */
export function listFrom(since: number, clockSkewMs: number): { ms: number; iso: string } {
  const ms = Math.max(0, Math.floor((since - clockSkewMs - 1000) / 1000) * 1000);
  return { ms, iso: new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z") };
}

/** `owner/name`, for messages and targets. */
export const fullName = (r: GitHubRepo) => `${r.owner}/${r.name}`;

/** The first repository alias of the options, for the drill's samples (`app` when none parse). */
export function firstRepoAlias(options: unknown): string {
  const repos = (options as { repos?: unknown } | undefined)?.repos;
  const first = typeof repos === "object" && repos !== null ? Object.keys(repos)[0] : undefined;
  return first ?? "app";
}
