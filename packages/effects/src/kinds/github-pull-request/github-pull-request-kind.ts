import {
  absent,
  defineEffectKind,
  fail,
  hasKeyMarker,
  IdemError,
  invalid,
  type ProbeCall,
  type ProbeResult,
  present,
  sleepOn,
  withKeyMarker,
} from "@idem/kit";
import { z } from "zod";
import {
  type GitHubClient,
  openGitHubClient,
  repoPath,
} from "../../clients/github/github-client.js";
import type { GitHubAnswer } from "../../clients/github/github-failure.js";
import { githubMessage } from "../../clients/github/github-failure.js";
import {
  asItem,
  collectMarked,
  findMarked,
  itemDetail,
  type MarkedList,
  madeBy,
} from "../github/github-marked.js";
import {
  body,
  branch,
  checkGitHubSpec,
  firstRepoAlias,
  fullName,
  type GitHubOptions,
  GitHubOptionsSchema,
  type GitHubRepo,
  githubRepo,
  listFrom,
  repoAlias,
  resolveGitHubOptions,
  title,
} from "../github/github-options.js";

/**
 * `github.pull_request`: a pull request from `head` into `base` (default: the repository's default
 * branch) on a configured repository. The head branch is a branch of that repository that exists
 * when the effect is applied: pushed by a `git.commit` (or `git.patch`) effect earlier in the same
 * output, on a remote repo whose `url` is this repository, or there already
 * (docs/kinds/github.md, "Where the head branch comes from").
 */
export const GitHubPullRequestSpecSchema = z.strictObject({
  kind: z.literal("github.pull_request"),
  repo: repoAlias,
  title,
  body: body.optional(),
  head: branch,
  base: branch.optional(),
  draft: z.boolean().optional(),
});
/** A parsed GitHubPullRequestSpecSchema. */
export type GitHubPullRequestSpec = z.infer<typeof GitHubPullRequestSpecSchema>;

type Call = ProbeCall<GitHubOptions, GitHubClient>;

/**
 * The pull requests of `head` (into `base` when given), newest first. `head` is `owner:branch`,
 * as GitHub wants it (a bare branch name is ignored, and every pull request listed).
 */
function pullsOf(
  repo: GitHubRepo,
  spec: GitHubPullRequestSpec,
  login: string,
  o: { state: "all" | "open"; base?: string },
): MarkedList {
  const into = o.base === undefined ? "" : ` -> ${o.base}`;
  return {
    path: `${repoPath(repo)}/pulls`,
    query: {
      state: o.state,
      head: `${repo.owner}:${spec.head}`,
      ...(o.base === undefined ? {} : { base: o.base }),
      sort: "created",
      direction: "desc",
    },
    what: `list the pull requests ${repo.owner}:${spec.head}${into} of ${fullName(repo)}`,
    login,
  };
}

async function baseOf(spec: GitHubPullRequestSpec, repo: GitHubRepo, client: GitHubClient) {
  return spec.base ?? (await client.defaultBranch(repo));
}

/**
 * Lists the head's pull requests (every state, into any base: the key tells which is ours, even
 * if the default branch changed since), newest first, down to the recording time less the clock
 * skew: present when one that the token's account opened carries the key.
 */
async function probe(spec: GitHubPullRequestSpec, call: Call): Promise<ProbeResult> {
  const client = call.resource;
  const repo = githubRepo(call.options, spec.repo);
  const list = pullsOf(repo, spec, await client.login(), { state: "all" });
  list.stopBefore = listFrom(call.since, call.options.clockSkewMs).ms;
  const found = await findMarked(client, list, call.key);
  return found ? present(itemDetail(found)) : absent();
}

/**
 * GitHub refused the create with 422. "A pull request already exists" is checked: the open pull
 * request of this head and base is ours (made by an earlier attempt whose answer was lost) when it
 * carries the key, else it is someone else's and idem opens no second one (a conflict).
 */
async function refused(
  a: GitHubAnswer,
  spec: GitHubPullRequestSpec,
  call: Call,
  repo: GitHubRepo,
  base: string,
  what: string,
): Promise<Record<string, unknown>> {
  const client = call.resource;
  const said = githubMessage(a.body);
  if (/pull request already exists/i.test(said)) {
    const list = pullsOf(repo, spec, await client.login(), { state: "open", base });
    const others: number[] = [];
    for await (const page of client.pages(list.path, list.query, list.what, call.key)) {
      for (const raw of page) {
        const pr = asItem(raw);
        if (madeBy(pr, list.login) && hasKeyMarker(pr.body, call.key)) return itemDetail(pr);
        if (typeof pr.number === "number") others.push(pr.number);
      }
    }
    if (others.length === 0)
      throw fail.moved(`${what}: GitHub said one exists, and none is open now; probing again`);
    throw fail.conflict(
      `${what}: pull request #${others[0]} is open for ${repo.owner}:${spec.head} -> ${base} and does not carry this effect's key ${call.key}; idem opens no second one`,
    );
  }
  const fields = errorFields(a.body);
  if (fields.includes("head"))
    invalid(
      "head",
      `${JSON.stringify(spec.head)} is not a branch of ${fullName(repo)}: push it first (a git.commit with that branch earlier in the same output)`,
    );
  if (fields.includes("base"))
    invalid("base", `${JSON.stringify(base)} is not a branch of ${fullName(repo)}`);
  if (/no commits between/i.test(said))
    throw fail.conflict(`${what}: ${spec.head} has no commits that ${base} lacks (${said})`);
  throw new IdemError("INVALID_INPUT", `${what}: GitHub refused it (422: ${said})`, {
    details: { status: 422 },
  });
}

/** A 422 that a head GitHub does not see yet explains: "No commits between", or `head` invalid. */
function headNotSeen(a: GitHubAnswer): boolean {
  if (a.status !== 422) return false;
  return /no commits between/i.test(githubMessage(a.body)) || errorFields(a.body).includes("head");
}

/** The `field` of each entry of a 422's `errors`. */
function errorFields(b: unknown): string[] {
  const errors = (b as { errors?: unknown } | undefined)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.flatMap((e) =>
    typeof e === "object" && e !== null && typeof (e as { field?: unknown }).field === "string"
      ? [(e as { field: string }).field]
      : [],
  );
}

/** The `github.pull_request` kind (docs/kinds/github.md). */
export const githubPullRequestKind = defineEffectKind({
  name: "github.pull_request",
  description:
    "Opens a pull request from a branch into another on a configured GitHub repository, once: its body carries a hidden marker with the effect key, and the probe lists the branch's pull requests for it.",
  guarantee: "exactly-once-in-effect",
  spec: GitHubPullRequestSpecSchema,
  options: GitHubOptionsSchema,
  resolveOptions: resolveGitHubOptions,
  configSection: "github",
  check(spec, ctx) {
    checkGitHubSpec(spec, ctx.options);
    if (spec.base !== undefined && spec.base === spec.head)
      invalid("head", "is the base branch: a pull request needs two branches");
  },
  targets: (spec) => [`github:${spec.repo}@${spec.head}`],
  aliases: (spec) => [{ type: "repo", name: spec.repo }],
  knownAliases: (ctx) => Object.keys(ctx.options.repos).map((name) => ({ type: "repo", name })),
  approval: {
    facts: ["base", "head", "draft"],
    factsOf: (spec) => ({
      base: spec.base ?? "(default)",
      head: spec.head,
      draft: spec.draft ? "true" : "false",
    }),
  },
  describe: (spec) =>
    `${spec.repo}: pull request ${JSON.stringify(spec.title)} ${spec.head} -> ${spec.base ?? "(default branch)"}${spec.draft ? " (draft)" : ""}`,
  open: openGitHubClient,
  probe,
  async apply(spec, call) {
    if (!call.probed) {
      const p = await probe(spec, call);
      if (p.status === "present") return p.detail;
    }
    const client = call.resource;
    const repo = githubRepo(call.options, spec.repo);
    const base = await baseOf(spec, repo, client);
    const what = `open a pull request ${repo.owner}:${spec.head} -> ${base} on ${fullName(repo)}`;
    const body = {
      title: spec.title,
      head: spec.head,
      base,
      body: withKeyMarker(spec.body ?? "", call.key),
      ...(spec.draft === undefined ? {} : { draft: spec.draft }),
    };
    const started = call.clock.now();
    for (let delay = 1000; ; delay = Math.min(delay * 2, 8000)) {
      const a = await client.send("POST", client.url(`${repoPath(repo)}/pulls`), what, {
        create: true,
        scope: call.key,
        body,
      });
      if (a.status === 201) {
        const pr = asItem(a.body);
        await client.identity.confirm(pr, `pull request #${pr.number ?? "?"}`);
        return itemDetail(pr);
      }
      // A push reaches the pull requests API a moment later: a head it does not see yet (or
      // without the commits just pushed) is tried again for pushLagMs before it counts.
      const waited = call.clock.now() - started;
      if (headNotSeen(a) && waited + delay <= call.options.pushLagMs) {
        await sleepOn(call.clock, delay);
        continue;
      }
      if (a.status === 422) return refused(a, spec, call, repo, base, what);
      throw client.failure(a, what);
    }
  },
  scan: {
    target: (spec) => `github:${spec.repo}/pulls`,
    async keys(spec, call) {
      const client = call.resource;
      const repo = githubRepo(call.options, spec.repo);
      return collectMarked(
        client,
        {
          path: `${repoPath(repo)}/pulls`,
          query: { state: "all", sort: "created", direction: "desc" },
          what: `list the pull requests of ${fullName(repo)}`,
          login: await client.login(),
          stopBefore: call.clock.now() - call.options.scanWindowMs,
        },
        (pr) => `#${pr.number}`,
      );
    },
  },
  samples: {
    valid: (i, ctx) => ({
      kind: "github.pull_request" as const,
      repo: firstRepoAlias(ctx.options),
      title: `idem drill ${i}`,
      body: `Opened by idem's conformance drill (sample ${i}).`,
      head: `idem-drill-${i}`,
    }),
    invalid: [
      { spec: { kind: "github.pull_request", repo: "app", title: " ", head: "x" }, field: "title" },
      {
        spec: { kind: "github.pull_request", repo: "app", title: "t", head: "a..b" },
        field: "head",
      },
      {
        spec: {
          kind: "github.pull_request",
          repo: "app",
          title: "t",
          head: "x",
          body: "<!-- idem-effect: other-job/0 -->",
        },
        field: "body",
        why: "a marker of another key would make that effect look applied",
      },
      {
        spec: { kind: "github.pull_request", repo: "no-such-alias", title: "t", head: "x" },
        field: "repo",
      },
    ],
  },
});
