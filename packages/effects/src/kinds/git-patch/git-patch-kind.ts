import { type GitRepos, patchPaths, repoDir, repoOf } from "@idem/git";
import { type AnyEffectKind, defineEffectKind } from "@idem/kit";
import { checkFullPath, checkingField } from "../../sandbox.js";
import {
  checkGitTarget,
  GIT_CONFIG,
  gitAliases,
  gitBatchTarget,
  gitKnownAliases,
  gitOrderingTargets,
  gitQueuedApplies,
  gitScan,
  probeGitBatch,
} from "../git/git-kind-parts.js";
import { type GitKindSettings, type GitResource, openGitResource } from "../git/git-resource.js";
import { firstLine } from "../git-commit/git-commit-kind.js";
import { applyGitPatch, checkPatchSpec, probeGitPatch } from "./git-patch-effect.js";
import { type GitPatchSpec, GitPatchSpecSchema } from "./spec.js";

/**
 * `git.patch`: a unified text diff applied onto a configured repository's branch and committed
 * with the effect key as its `Idem-Effect:` trailer. Present when the key's commit is reachable,
 * or when the patch applies in reverse (applied by hand); a patch that applies neither way is a
 * conflict, never forced. Its options are the config's `repos` section, shared with git.commit.
 */
export function createGitPatchKind(settings: GitKindSettings = {}): AnyEffectKind {
  return defineEffectKind<GitPatchSpec, GitRepos, GitResource>({
    name: "git.patch",
    description:
      "Applies a unified text diff (as git diff writes it) onto a configured repository's branch and commits it, the commit carrying the effect key as its Idem-Effect trailer.",
    guarantee: "exactly-once-in-effect",
    spec: GitPatchSpecSchema,
    ...GIT_CONFIG,
    check(spec, ctx) {
      if (!checkGitTarget(spec, ctx)) return;
      const max = ctx.limits.maxFileBytes;
      if (Buffer.byteLength(spec.patch, "utf8") > max) {
        ctx.issue("patch", `is larger than limits.maxFileBytes (${max})`);
        return;
      }
      // Parsed by the applier's own reader: traversal, git's path rules for every name its headers
      // give, absolute paths, symlinks and submodules, binary hunks, text that is not a diff.
      const repo = repoOf(ctx.options, spec.repo);
      const repoPath = repo && repoDir(repo);
      checkingField("patch", () => {
        for (const p of patchPaths(checkPatchSpec(spec, max))) checkFullPath("patch", repoPath, p);
      });
    },
    targets: gitOrderingTargets,
    aliases: gitAliases,
    knownAliases: gitKnownAliases,
    probeDependsOnEarlier: true,
    approval: { facts: ["branch"], factsOf: (spec) => ({ branch: spec.branch ?? "(default)" }) },
    describe: (spec) =>
      `${spec.repo}@${spec.branch ?? "(default branch)"}: ${firstLine(spec.message)} (patch)`,
    probeable: () => true,
    targetDedup: () => true,
    queuedApplies: gitQueuedApplies,
    open: (ctx) => openGitResource(ctx, settings),
    probe: (spec, call) =>
      probeGitPatch(call.resource, spec, { ...call, maxFileBytes: call.limits.maxFileBytes }),
    apply: (spec, call) =>
      applyGitPatch(call.resource, spec, { ...call, maxFileBytes: call.limits.maxFileBytes }),
    batchTarget: gitBatchTarget,
    probeBatch: probeGitBatch,
    scan: gitScan,
  });
}

/** idem's git.patch, with the default settings. */
export const gitPatchKind = createGitPatchKind();
