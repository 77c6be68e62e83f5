import { defineEffectKind } from "@idem/kit";
import { aliasOf } from "@idem/schema";
import {
  checkGitTarget,
  type GitResource,
  gitAliases,
  gitBatchTarget,
  gitKnownAliases,
  gitOrderingTargets,
  gitQueuedApplies,
  gitScan,
  probeGitBatch,
} from "../../git/git-kind-parts.js";
import { patchPaths } from "../../git/patch/patch-paths.js";
import { checkFullPath, checkingField } from "../../sandbox.js";
import { firstLine } from "../git-commit/git-commit-kind.js";
import { effectsServices } from "../services.js";
import { checkPatchSpec, createGitPatchHandler } from "./git-patch-effect.js";
import { type GitPatchSpec, GitPatchSpecSchema } from "./spec.js";

type Handler = ReturnType<typeof createGitPatchHandler>;

/**
 * `git.patch`: a unified text diff applied onto a configured repository's branch and committed
 * with the effect key as its `Idem-Effect:` trailer. Present when the key's commit is reachable,
 * or when the patch applies in reverse (applied by hand); a patch that applies neither way is a
 * conflict, never forced.
 */
export const gitPatchKind = defineEffectKind<GitPatchSpec, undefined, GitResource<Handler>>({
  name: "git.patch",
  description:
    "Applies a unified text diff (as git diff writes it) onto a configured repository's branch and commits it, the commit carrying the effect key as its Idem-Effect trailer.",
  guarantee: "exactly-once-in-effect",
  spec: GitPatchSpecSchema,
  check(spec, ctx) {
    if (!checkGitTarget(spec, ctx)) return;
    const max = ctx.config.limits.maxFileBytes;
    if (Buffer.byteLength(spec.patch, "utf8") > max) {
      ctx.issue("patch", `is larger than limits.maxFileBytes (${max})`);
      return;
    }
    // Parsed by the applier's own reader: traversal, git's path rules for every name its headers
    // give, absolute paths, symlinks and submodules, binary hunks, text that is not a diff.
    const repoPath = aliasOf(ctx.config.repos, spec.repo)?.path;
    checkingField("patch", () => {
      for (const p of patchPaths(checkPatchSpec(spec, max))) checkFullPath("patch", repoPath, p);
    });
  },
  targets: gitOrderingTargets,
  aliases: gitAliases,
  knownAliases: gitKnownAliases,
  probeDependsOnEarlier: true,
  describe: (spec) =>
    `${spec.repo}@${spec.branch ?? "(default branch)"}: ${firstLine(spec.message)} (patch)`,
  probeable: () => true,
  targetDedup: () => true,
  queuedApplies: gitQueuedApplies,
  open(ctx): GitResource<Handler> {
    const services = effectsServices(ctx);
    return {
      services,
      handler: createGitPatchHandler(
        services.git,
        ctx.config.limits.maxFileBytes,
        services.scratch,
      ),
    };
  },
  probe: (spec, call) => call.resource.handler.probe(spec, call.key, call.hint),
  apply: (spec, call) => call.resource.handler.apply(spec, call.key, call.probed, call.order),
  batchTarget: gitBatchTarget,
  probeBatch: probeGitBatch,
  scan: gitScan,
});
