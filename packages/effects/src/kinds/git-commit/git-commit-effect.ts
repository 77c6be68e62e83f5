import type { EffectHandler, ProbeHint, ProbeResult } from "../../effect-handler.js";
import { applyOnBranch, gitTarget, probeOnBranch } from "../../git/git-apply.js";
import type { GitTargets } from "../../git/git-targets.js";
import { type FileChange, treeWith } from "../../git/plumbing/tree-writer.js";
import {
  checkGitFileContent,
  checkKey,
  checkMessage,
  checkRelativePath,
  refuse,
} from "../../sandbox.js";
import type { GitCommitSpec } from "./spec.js";

/**
 * Validates a git.commit spec at the target; returns its changes.
 * @throws IdemError SANDBOX_VIOLATION
 */
export function gitCommitChanges(spec: GitCommitSpec, maxFileBytes: number): FileChange[] {
  checkMessage(spec.message);
  if (!Array.isArray(spec.files) || spec.files.length === 0)
    refuse("files", "must change at least one file");
  const seen = new Set<string>();
  return spec.files.map((f, i) => {
    checkRelativePath(`files.${i}.path`, f.path);
    if (seen.has(f.path)) refuse(`files.${i}.path`, `"${f.path}" appears twice`);
    seen.add(f.path);
    if ("content" in f && typeof f.content === "string") {
      const content = Buffer.from(f.content, "utf8");
      if (content.length > maxFileBytes)
        refuse(`files.${i}.content`, `is larger than limits.maxFileBytes (${maxFileBytes})`);
      checkGitFileContent(`files.${i}.content`, f.path, content);
      return { parts: f.path.split("/"), content };
    }
    if ("delete" in f && f.delete === true) return { parts: f.path.split("/"), content: null };
    return refuse(`files.${i}`, "must have content or delete: true");
  });
}

/**
 * git.commit: writes and deletes files and commits them on the branch with `Idem-Effect: <key>`.
 * The commit is built in the object database from the probed base tree, then the branch moves by
 * compare-and-swap together with the key's index ref; a checked-out working tree follows.
 */
export function createGitCommitHandler(
  targets: GitTargets,
  maxFileBytes: number,
): EffectHandler<GitCommitSpec> {
  const pathsOf = (spec: GitCommitSpec) => spec.files.map((f) => f.path);
  const probe = async (
    spec: GitCommitSpec,
    key: string,
    hint?: ProbeHint,
  ): Promise<ProbeResult> => {
    checkKey(key);
    gitCommitChanges(spec, maxFileBytes);
    const target = await gitTarget(targets, spec);
    return (await probeOnBranch(target, key, hint, pathsOf(spec), spec.from)).result;
  };
  return {
    probeable: () => true,
    targetDedup: () => true,
    probe,
    async apply(spec, key, probed, order) {
      checkKey(key);
      const changes = gitCommitChanges(spec, maxFileBytes);
      const target = await gitTarget(targets, spec);
      return applyOnBranch(target, {
        key,
        probed,
        probeNow: () => probe(spec, key),
        change: {
          message: spec.message,
          paths: pathsOf(spec),
          tree: (baseTree) => treeWith(target.repo.objects, baseTree, changes),
          order,
        },
      });
    },
  };
}
