import type {
  BatchCall,
  CheckContext,
  KindAlias,
  KindContext,
  ProbeResult,
  ScanCall,
} from "@idem/kit";
import { aliasOf, branchAllowed, type Config, namedBranches } from "@idem/schema";
import type { GitCommitSpec } from "../kinds/git-commit/spec.js";
import type { GitPatchSpec } from "../kinds/git-patch/spec.js";
import type { EffectsServices } from "../kinds/services.js";
import type { GitBranchSpec } from "./git-apply.js";
import { probeGitGroup } from "./git-probe-batch.js";

// What the two git kinds (git.commit, git.patch: kinds/git-commit, kinds/git-patch) share: their
// target (a repo alias and a branch), the ordering target, the queue of a remote branch, the scan of
// a branch's Idem-Effect trailers and the batch probe of a branch that answers both kinds at once.

/** The resource of a git kind: its handler and the services it shares with the other git kind. */
export interface GitResource<H> {
  handler: H;
  services: EffectsServices;
}

/** The branch a git effect acts on: the spec's, else the repo's configured one (`main` unknown). */
export function gitBranchOf(spec: GitBranchSpec, config: Config): string {
  return spec.branch ?? aliasOf(config.repos, spec.repo)?.branch ?? "main";
}

/** The ordering target of a git effect: `repo:<alias>@<branch>`. */
export function gitOrderingTargets(spec: GitBranchSpec, ctx: KindContext<unknown>): string[] {
  return [`repo:${spec.repo}@${gitBranchOf(spec, ctx.config)}`];
}

/** The alias a git effect names, for replay's `--repo`. */
export function gitAliases(spec: GitBranchSpec): KindAlias[] {
  return [{ type: "repo", name: spec.repo }];
}

/** The repo aliases the config defines. */
export function gitKnownAliases(ctx: KindContext<unknown>): KindAlias[] {
  return Object.keys(ctx.config.repos).map((name) => ({ type: "repo", name }));
}

/** A remote repo's branch queues its pushes (the interpreter's pipeline). */
export function gitQueuedApplies(spec: GitBranchSpec, ctx: KindContext<unknown>): boolean {
  return typeof aliasOf(ctx.config.repos, spec.repo)?.url === "string";
}

/**
 * The checks of a git effect's target that the config decides: the repo alias configured, the
 * branch one the repo allows. Reports through `ctx.issue`; true when both hold.
 */
export function checkGitTarget(spec: GitBranchSpec, ctx: CheckContext<unknown>): boolean {
  const repo = aliasOf(ctx.config.repos, spec.repo);
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
  target: (spec: GitBranchSpec, ctx: KindContext<unknown>) =>
    `${spec.repo}@${gitBranchOf(spec, ctx.config)}`,
  keys: async <H>(spec: GitBranchSpec, call: ScanCall<unknown, GitResource<H>>) => {
    const repo = call.resource.services.git.get(spec.repo);
    return repo.trailers(gitBranchOf(spec, call.config));
  },
};

/**
 * Every branch the config allows on each repo, as the spec a scan reads (repo and branch): the
 * git kinds' `scan.configured`, answered by one of them.
 */
export function gitConfiguredBranches<S>(kind: string, ctx: KindContext<unknown>): S[] {
  return Object.entries(ctx.config.repos).flatMap(([repo, r]) =>
    namedBranches(r).map((branch) => ({ kind, repo, branch }) as S),
  );
}

/** Both git kinds' specs on one branch share one batch: the branch's target. */
export function gitBatchTarget(spec: GitBranchSpec, ctx: KindContext<unknown>): string {
  return `git:${spec.repo}\n${gitBranchOf(spec, ctx.config)}`;
}

/**
 * The batch probe both git kinds share (their `probeBatch`): the items of one branch, commits and
 * patches in recording order, answered by one scan of the branch (see `probeGitGroup`). An item
 * whose spec is invalid at the target is a conflict carrying the error.
 */
export async function probeGitBatch<H>(
  items: readonly { spec: GitCommitSpec | GitPatchSpec; key: string; since: number }[],
  call: BatchCall<unknown, GitResource<H>>,
): Promise<Map<string, ProbeResult>> {
  const out = new Map<string, ProbeResult>();
  const first = items[0];
  if (!first) return out;
  const { services } = call.resource;
  // An unknown repo alias fails the whole batch, as the branch cannot be read (UNKNOWN_ALIAS).
  const repo = services.git.get(first.spec.repo);
  await probeGitGroup(
    { repo, branch: gitBranchOf(first.spec, call.config), items: [...items] },
    {
      scratch: services.scratch,
      maxFileBytes: call.config.limits.maxFileBytes,
      simulate: call.simulate,
      out,
      probeOne: (spec, key) => call.probeOne(spec, key, 0),
    },
  );
  return out;
}
