import {
  branchAllowed,
  type GitRepos,
  GitReposSchema,
  namedBranches,
  repoOf,
  resolveGitRepos,
} from "@idem/git";
import type {
  BatchCall,
  CheckContext,
  KindAlias,
  KindContext,
  ProbeResult,
  ScanCall,
} from "@idem/kit";
import type { GitCommitSpec } from "../git-commit/spec.js";
import type { GitPatchSpec } from "../git-patch/spec.js";
import { gitDoctor } from "./doctor/git-doctor.js";
import { gitLocks } from "./doctor/git-locks.js";
import type { GitBranchSpec } from "./git-apply.js";
import { probeGitGroup } from "./git-probe-batch.js";
import type { GitResource } from "./git-resource.js";

// What the two git kinds (git.commit, git.patch: kinds/git-commit, kinds/git-patch) share: their
// config section (`repos`), their target (a repo alias and a branch), the ordering target, the
// queue of a remote branch, the scan of a branch's Idem-Effect trailers, the batch probe of a
// branch that answers both kinds at once, and the repositories they open in one host.

/** The config section of the git kinds, parsed and resolved as the kit does for every kind. */
export const GIT_CONFIG = {
  configSection: "repos",
  configSectionOptional: true,
  options: GitReposSchema,
  resolveOptions: resolveGitRepos,
  doctor: gitDoctor,
  locks: gitLocks,
} as const;

/** The branch a git effect acts on: the spec's, else the repo's configured one (`main` unknown). */
export function gitBranchOf(spec: GitBranchSpec, repos: GitRepos): string {
  return spec.branch ?? repoOf(repos, spec.repo)?.branch ?? "main";
}

/** The ordering target of a git effect: `repo:<alias>@<branch>`. */
export function gitOrderingTargets(spec: GitBranchSpec, ctx: KindContext<GitRepos>): string[] {
  return [`repo:${spec.repo}@${gitBranchOf(spec, ctx.options)}`];
}

/** The place a git effect acts on, for replay's `--repo`. */
export function gitAliases(spec: GitBranchSpec): KindAlias[] {
  return [{ type: "repo", name: spec.repo }];
}

/** The configured repos. */
export function gitKnownAliases(ctx: KindContext<GitRepos>): KindAlias[] {
  return Object.keys(ctx.options).map((name) => ({ type: "repo", name }));
}

/**
 * Every configured repo's branch queues its applies (the interpreter's pipeline): a remote's
 * pushes, a local branch's batches (its queue checks a probe made before the earlier queued
 * commits landed against them, and answers TARGET_MOVED for anything else that moved the branch).
 */
export function gitQueuedApplies(spec: GitBranchSpec, ctx: KindContext<GitRepos>): boolean {
  return repoOf(ctx.options, spec.repo) !== undefined;
}

/**
 * The checks of a git effect's target that the config decides: the repo alias configured, the
 * branch one the repo allows. Reports through `ctx.issue`; true when both hold.
 */
export function checkGitTarget(spec: GitBranchSpec, ctx: CheckContext<GitRepos>): boolean {
  const repo = repoOf(ctx.options, spec.repo);
  if (!repo) {
    ctx.issue("repo", `unknown repo alias "${spec.repo}"`);
    return false;
  }
  if (spec.branch !== undefined && !branchAllowed(repo, spec.branch)) {
    ctx.issue("branch", `branch "${spec.branch}" is not allowed for repo "${spec.repo}"`);
    return false;
  }
  return true;
}

/** The scan of a branch: every Idem-Effect key reachable from it, with its commits. */
export const gitScan = {
  target: (spec: GitBranchSpec, ctx: KindContext<GitRepos>) =>
    `${spec.repo}@${gitBranchOf(spec, ctx.options)}`,
  keys: async (spec: GitBranchSpec, call: ScanCall<GitRepos, GitResource>) => {
    const repo = call.resource.targets.get(spec.repo);
    return repo.trailers(gitBranchOf(spec, call.options));
  },
};

/**
 * Every branch the config allows on each repo, as the spec a scan reads (repo and branch): the
 * git kinds' `scan.configured`, answered by one of them.
 */
export function gitConfiguredBranches<S>(kind: string, ctx: KindContext<GitRepos>): S[] {
  return Object.entries(ctx.options).flatMap(([repo, r]) =>
    namedBranches(r).map((branch) => ({ kind, repo, branch }) as S),
  );
}

/** Both git kinds' specs on one branch share one batch: the branch's target. */
export function gitBatchTarget(spec: GitBranchSpec, ctx: KindContext<GitRepos>): string {
  return `git:${spec.repo}\n${gitBranchOf(spec, ctx.options)}`;
}

/**
 * The batch probe both git kinds share (their `probeBatch`): the items of one branch, commits and
 * patches in recording order, answered by one scan of the branch (see `probeGitGroup`). An item
 * whose spec is invalid at the target is a conflict carrying the error.
 */
export async function probeGitBatch(
  items: readonly { spec: GitCommitSpec | GitPatchSpec; key: string; since: number }[],
  call: BatchCall<GitRepos, GitResource>,
): Promise<Map<string, ProbeResult>> {
  const out = new Map<string, ProbeResult>();
  const first = items[0];
  if (!first) return out;
  const { targets, scratch } = call.resource;
  // An unknown repo alias fails the whole batch, as the branch cannot be read (UNKNOWN_ALIAS).
  const repo = targets.get(first.spec.repo);
  await probeGitGroup(
    { repo, branch: gitBranchOf(first.spec, call.options), items: [...items] },
    {
      scratch,
      maxFileBytes: call.limits.maxFileBytes,
      simulate: call.simulate,
      out,
      probeOne: (spec, key) => call.probeOne(spec, key, 0),
    },
  );
  return out;
}
