import { type FileChange, treeWith } from "@idem/git";
import type { ApplyOrder, ProbeHint, ProbeResult } from "@idem/kit";
import {
  checkGitFileContent,
  checkKey,
  checkMessage,
  checkRelativePath,
  refuse,
} from "../../sandbox.js";
import { applyOnBranch, gitTarget, probeOnBranch } from "../git/git-apply.js";
import type { GitResource } from "../git/git-resource.js";
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

const pathsOf = (spec: GitCommitSpec) => spec.files.map((f) => f.path);

/**
 * git.commit's probe: the key on the branch (`hint`: what an earlier probe stored, the head it
 * probed), and when it is absent, the probed head's tree checked for the spec's paths.
 * @throws IdemError SANDBOX_VIOLATION, UNKNOWN_ALIAS, TARGET_MISSING
 */
export async function probeGitCommit(
  git: GitResource,
  spec: GitCommitSpec,
  call: { key: string; hint?: ProbeHint | undefined; maxFileBytes: number },
): Promise<ProbeResult> {
  checkKey(call.key);
  gitCommitChanges(spec, call.maxFileBytes);
  const target = await gitTarget(git.targets, spec);
  return (await probeOnBranch(target, call.key, call.hint, pathsOf(spec), spec.from)).result;
}

/**
 * git.commit's apply: writes and deletes files and commits them on the branch with `Idem-Effect:
 * <key>`. The commit is built in the object database from the probed base tree, then the branch
 * moves by compare-and-swap together with the key's index ref; a checked-out working tree follows.
 */
export async function applyGitCommit(
  git: GitResource,
  spec: GitCommitSpec,
  call: {
    key: string;
    probed?: ProbeResult | undefined;
    order?: ApplyOrder | undefined;
    maxFileBytes: number;
  },
): Promise<Record<string, unknown>> {
  checkKey(call.key);
  const changes = gitCommitChanges(spec, call.maxFileBytes);
  const target = await gitTarget(git.targets, spec);
  return applyOnBranch(target, {
    key: call.key,
    probed: call.probed,
    probeNow: () => probeGitCommit(git, spec, { key: call.key, maxFileBytes: call.maxFileBytes }),
    change: {
      message: spec.message,
      paths: pathsOf(spec),
      tree: (baseTree, objects = target.repo.objects) => treeWith(objects, baseTree, changes),
      inProcess: true,
      order: call.order,
    },
  });
}
