import {
  absent,
  defineEffectKind,
  fail,
  invalid,
  isIdemError,
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
import { githubMessage } from "../../clients/github/github-failure.js";
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
} from "../github/github-options.js";

/**
 * `github.comment`: a comment on issue or pull request `number` of a configured repository (a
 * pull request's conversation is its issue's: the issue comments endpoint serves both).
 */
export const GitHubCommentSpecSchema = z.strictObject({
  kind: z.literal("github.comment"),
  repo: repoAlias,
  number: z.number().int().min(1).max(2_147_483_647),
  body: body.refine((b) => b.trim() !== "", "must not be blank"),
});
/** A parsed GitHubCommentSpecSchema. */
export type GitHubCommentSpec = z.infer<typeof GitHubCommentSpecSchema>;

type Call = ProbeCall<GitHubOptions, GitHubClient>;

const commentsPath = (repo: GitHubRepo, n: number) => `${repoPath(repo)}/issues/${n}/comments`;

/** An issue that is not there is the spec's mistake: INVALID_INPUT naming `number`. */
async function onIssue<T>(repo: GitHubRepo, n: number, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (isIdemError(e, "TARGET_MISSING"))
      invalid("number", `${fullName(repo)} has no issue or pull request #${n} the token can see`);
    throw e;
  }
}

function comments(repo: GitHubRepo, n: number, login: string, since: string): MarkedList {
  return {
    path: commentsPath(repo, n),
    query: { since },
    what: `list the comments on ${fullName(repo)}#${n}`,
    login,
  };
}

/**
 * Lists the issue's comments updated since the recording time less the clock skew (GitHub's
 * `since`), following pages: present when one the token's account wrote carries the key.
 */
async function probe(spec: GitHubCommentSpec, call: Call): Promise<ProbeResult> {
  const client = call.resource;
  const repo = githubRepo(call.options, spec.repo);
  const login = await client.login();
  const from = listFrom(call.since, call.options.clockSkewMs);
  const found = await onIssue(repo, spec.number, () =>
    findMarked(client, comments(repo, spec.number, login, from.iso), call.key),
  );
  return found ? present(itemDetail(found)) : absent();
}

/** The `github.comment` kind (docs/kinds/github.md). */
export const githubCommentKind = defineEffectKind({
  name: "github.comment",
  description:
    "Comments on an issue or a pull request of a configured GitHub repository, once: the comment carries a hidden marker with the effect key, and the probe lists the issue's comments since the output was recorded.",
  guarantee: "exactly-once-in-effect",
  spec: GitHubCommentSpecSchema,
  options: GitHubOptionsSchema,
  resolveOptions: resolveGitHubOptions,
  configSection: "github",
  check: (spec, ctx) => checkGitHubSpec(spec, ctx.options),
  targets: (spec) => [`github:${spec.repo}#${spec.number}`],
  aliases: (spec) => [{ type: "repo", name: spec.repo }],
  knownAliases: (ctx) => Object.keys(ctx.options.repos).map((name) => ({ type: "repo", name })),
  approval: { facts: ["number"], factsOf: (spec) => ({ number: String(spec.number) }) },
  describe: (spec) => `${spec.repo}#${spec.number}: comment (${spec.body.length} characters)`,
  open: openGitHubClient,
  probe,
  async apply(spec, call) {
    if (!call.probed) {
      const p = await probe(spec, call);
      if (p.status === "present") return p.detail;
    }
    const client = call.resource;
    const repo = githubRepo(call.options, spec.repo);
    const what = `comment on ${fullName(repo)}#${spec.number}`;
    const a = await client.send("POST", client.url(commentsPath(repo, spec.number)), what, {
      create: true,
      scope: call.key,
      body: { body: withKeyMarker(spec.body, call.key) },
    });
    if (a.status === 201) {
      const comment = asItem(a.body);
      await client.identity.confirm(comment, `comment ${comment.id ?? "?"} on #${spec.number}`);
      return itemDetail(comment);
    }
    if (a.status === 404)
      invalid("number", `${fullName(repo)} has no issue or pull request #${spec.number}`);
    if (a.status === 403 && /locked/i.test(githubMessage(a.body)))
      throw fail.conflict(`${what}: the conversation is locked`);
    throw client.failure(a, what);
  },
  scan: {
    target: (spec) => `github:${spec.repo}#${spec.number}`,
    async keys(spec, call) {
      const client = call.resource;
      const repo = githubRepo(call.options, spec.repo);
      const login = await client.login();
      const from = listFrom(call.clock.now() - call.options.scanWindowMs, 0);
      return onIssue(repo, spec.number, () =>
        collectMarked(
          client,
          comments(repo, spec.number, login, from.iso),
          (c) => `comment ${c.id}`,
        ),
      );
    },
  },
  samples: {
    valid: (i, ctx) => ({
      kind: "github.comment" as const,
      repo: firstRepoAlias(ctx.options),
      number: 1,
      body: `idem's conformance drill, comment ${i}.`,
    }),
    invalid: [
      { spec: { kind: "github.comment", repo: "app", number: 0, body: "hi" }, field: "number" },
      { spec: { kind: "github.comment", repo: "app", number: 1, body: " \n" }, field: "body" },
      {
        spec: { kind: "github.comment", repo: "app", number: 1, body: "<!-- idem-effect: j/0 -->" },
        field: "body",
        why: "a marker of another key would make that effect look applied",
      },
      {
        spec: { kind: "github.comment", repo: "no-such-alias", number: 1, body: "hi" },
        field: "repo",
      },
    ],
  },
});
