import {
  absent,
  defineEffectKind,
  type ProbeCall,
  type ProbeResult,
  present,
  withKeyMarker,
} from "@idem/kit";
import { z } from "zod";
import {
  type GitHubClient,
  openGitHubClient,
  repoPath,
} from "../../clients/github/github-client.js";
import { githubDoctor } from "../github/github-doctor.js";
import {
  asItem,
  collectMarked,
  findMarked,
  itemDetail,
  type MarkedList,
} from "../github/github-marked.js";
import {
  body,
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

const label = z
  .string()
  .min(1)
  .max(50)
  .refine((l) => l.trim() !== "" && !/[,\r\n\0]/.test(l), "must be one line, not blank, no comma");

/** `github.issue`: an issue on a configured repository (docs/kinds/github.md). */
export const GitHubIssueSpecSchema = z.strictObject({
  kind: z.literal("github.issue"),
  repo: repoAlias,
  title,
  body: body.optional(),
  /** Labels to set; GitHub creates the missing ones when the token may, else drops them. */
  labels: z.array(label).max(10).optional(),
});
/** A parsed GitHubIssueSpecSchema. */
export type GitHubIssueSpec = z.infer<typeof GitHubIssueSpecSchema>;

/** The issues list holds pull requests too; the probes count issues only. */
const isIssue = (i: { pull_request?: unknown }) => i.pull_request === undefined;

/**
 * The issues of a repository updated since `from` (GitHub's `since` filters on `updated_at`,
 * which is never before the creation), every state, newest first. Not filtered by `creator` on
 * GitHub's side: for a bot's login that match is not assured on every GitHub (GHEC, GHES), and a
 * filter that silently matches nothing would make every probe answer absent. The author is
 * checked here instead, as the pull request probe does.
 */
function issuesSince(
  repo: GitHubRepo,
  login: string,
  from: { ms: number; iso: string },
): MarkedList {
  return {
    path: `${repoPath(repo)}/issues`,
    query: { since: from.iso, state: "all", sort: "created", direction: "desc" },
    what: `list the issues of ${fullName(repo)} since ${from.iso}`,
    login,
    stopBefore: from.ms,
    accept: isIssue,
  };
}

/**
 * Lists the repository's issues since the recording time less the clock skew, newest first,
 * stopping at the first one created before that time: present when one the token's account made
 * carries the key. Never the search API, whose index lags the writes.
 */
async function probe(
  spec: GitHubIssueSpec,
  call: ProbeCall<GitHubOptions, GitHubClient>,
): Promise<ProbeResult> {
  const client = call.resource;
  const repo = githubRepo(call.options, spec.repo);
  const login = await client.login();
  const from = listFrom(call.since, call.options.clockSkewMs);
  const found = await findMarked(client, issuesSince(repo, login, from), call.key);
  return found ? present(itemDetail(found)) : absent();
}

/** The `github.issue` kind (docs/kinds/github.md). */
export const githubIssueKind = defineEffectKind({
  name: "github.issue",
  description:
    "Opens an issue on a configured GitHub repository, once: its body carries a hidden marker with the effect key, and the probe lists the repository's issues since the output was recorded for one the token's account made.",
  guarantee: "exactly-once-in-effect",
  spec: GitHubIssueSpecSchema,
  options: GitHubOptionsSchema,
  resolveOptions: resolveGitHubOptions,
  configSection: "github",
  check: (spec, ctx) => checkGitHubSpec(spec, ctx.options),
  aliases: (spec) => [{ type: "repo", name: spec.repo }],
  knownAliases: (ctx) => Object.keys(ctx.options.repos).map((name) => ({ type: "repo", name })),
  approval: { facts: ["labels"], factsOf: (spec) => ({ labels: spec.labels ?? [] }) },
  describe: (spec) =>
    `${spec.repo}: issue ${JSON.stringify(spec.title)}${spec.labels?.length ? ` [${spec.labels.join(", ")}]` : ""}`,
  open: openGitHubClient,
  doctor: githubDoctor,
  probe,
  async apply(spec, call) {
    if (!call.probed) {
      const p = await probe(spec, call);
      if (p.status === "present") return p.detail;
    }
    const client = call.resource;
    const repo = githubRepo(call.options, spec.repo);
    const what = `open an issue on ${fullName(repo)}`;
    const a = await client.send("POST", client.url(`${repoPath(repo)}/issues`), what, {
      create: true,
      scope: call.key,
      body: {
        title: spec.title,
        body: withKeyMarker(spec.body ?? "", call.key),
        ...(spec.labels === undefined ? {} : { labels: spec.labels }),
      },
    });
    if (a.status === 201) {
      const issue = asItem(a.body);
      await client.identity.confirm(issue, `issue #${issue.number ?? "?"}`);
      return itemDetail(issue);
    }
    throw client.failure(a, what);
  },
  scan: {
    target: (spec) => `github:${spec.repo}/issues`,
    async keys(spec, call) {
      const client = call.resource;
      const repo = githubRepo(call.options, spec.repo);
      const login = await client.login();
      const from = listFrom(call.clock.now() - call.options.scanWindowMs, 0);
      return collectMarked(client, issuesSince(repo, login, from), (issue) => `#${issue.number}`);
    },
  },
  samples: {
    valid: (i, ctx) => ({
      kind: "github.issue" as const,
      repo: firstRepoAlias(ctx.options),
      title: `idem drill ${i}`,
      body: `Opened by idem's conformance drill (sample ${i}).`,
    }),
    invalid: [
      { spec: { kind: "github.issue", repo: "app", title: "" }, field: "title" },
      { spec: { kind: "github.issue", repo: "app", title: "a\nb" }, field: "title" },
      {
        spec: { kind: "github.issue", repo: "app", title: "t", labels: ["a,b"] },
        field: "labels.0",
      },
      {
        spec: { kind: "github.issue", repo: "app", title: "t", body: "<!-- idem-effect: j/0 -->" },
        field: "body",
        why: "a marker of another key would make that effect look applied",
      },
      { spec: { kind: "github.issue", repo: "no-such-alias", title: "t" }, field: "repo" },
    ],
  },
});
