import {
  appliedInReverse,
  applyInProcess,
  modeChangesDone,
  type PatchFile,
  parsePatchFiles,
  patchedTree,
  patchPaths,
} from "@idem/git";
import type { ApplyOrder, ProbeHint, ProbeResult } from "@idem/kit";
import { checkKey, checkMessage, refuse } from "../../sandbox.js";
import { applyOnBranch, gitTarget, probeOnBranch } from "../git/git-apply.js";
import type { GitResource } from "../git/git-resource.js";
import type { GitPatchSpec } from "./spec.js";

/** Validates a git.patch spec at the target. @throws IdemError SANDBOX_VIOLATION, INVALID_INPUT */
export function checkPatchSpec(spec: GitPatchSpec, maxFileBytes: number): PatchFile[] {
  checkMessage(spec.message);
  if (typeof spec.patch !== "string" || spec.patch.length === 0) refuse("patch", "is empty");
  if (Buffer.byteLength(spec.patch) > maxFileBytes)
    refuse("patch", `is larger than limits.maxFileBytes (${maxFileBytes})`);
  return parsePatchFiles(spec.patch);
}

/**
 * git.patch's probe. Present: the key's commit is reachable, or the reverse patch applies cleanly
 * (applied by hand). Conflict: neither the patch nor its reverse applies; never forced.
 * @throws IdemError SANDBOX_VIOLATION, INVALID_INPUT, UNKNOWN_ALIAS, TARGET_MISSING
 */
export async function probeGitPatch(
  git: GitResource,
  spec: GitPatchSpec,
  call: { key: string; hint?: ProbeHint | undefined; maxFileBytes: number },
): Promise<ProbeResult> {
  const { key, hint } = call;
  const { scratch } = git;
  checkKey(key);
  const files = checkPatchSpec(spec, call.maxFileBytes);
  const target = await gitTarget(git.targets, spec);
  const paths = patchPaths(files);
  const byKey = await probeOnBranch(target, key, hint, paths);
  if (byKey.result.status !== "absent") return byKey.result;
  const repo = target.repo;
  const head = byKey.base ?? null;
  const tree = byKey.tree ?? null;
  // The plain patches git diff writes are applied in process, without a git process; git
  // answers for the rest and for every patch that does not apply forward.
  if (await applyInProcess(repo, tree, spec.patch, paths))
    return { status: "absent", detail: { base: head } };
  return scratch.probeLock.run(async () => {
    const file = await scratch.probeIndex(repo);
    await scratch.load(repo, file, tree);
    const fwd = await scratch.tryApply(repo, file, { baseTree: tree, patch: spec.patch, paths });
    // git applies a mode change again to a file that already has the new mode: such a patch is
    // applied when its mode changes are all there and its content applies in reverse.
    const modesDone = await modeChangesDone(repo, tree, files);
    if (fwd.ok && !modesDone) return { status: "absent", detail: { base: head } };
    if (await appliedInReverse(repo, file, tree, spec.patch))
      return { status: "present", detail: { commit: null, reversed: true, base: head } };
    return {
      status: "conflict",
      reason: fwd.ok
        ? `the patch's mode changes are in ${head} but its content is not`
        : `the patch does not apply to ${head}, nor in reverse: ${fwd.reason}`,
    };
  });
}

/**
 * git.patch's apply: the unified diff (text only) applied on the branch's probed tree and
 * committed with the trailer, the branch moved by compare-and-swap.
 */
export async function applyGitPatch(
  git: GitResource,
  spec: GitPatchSpec,
  call: {
    key: string;
    probed?: ProbeResult | undefined;
    order?: ApplyOrder | undefined;
    maxFileBytes: number;
  },
): Promise<Record<string, unknown>> {
  const { key } = call;
  checkKey(key);
  const files = checkPatchSpec(spec, call.maxFileBytes);
  const target = await gitTarget(git.targets, spec);
  const paths = patchPaths(files);
  return applyOnBranch(target, {
    key,
    probed: call.probed,
    probeNow: () => probeGitPatch(git, spec, { key, maxFileBytes: call.maxFileBytes }),
    change: {
      message: spec.message,
      paths,
      order: call.order,
      async tree(baseTree) {
        await target.repo.checkTreePaths(baseTree, paths);
        return patchedTree(target.repo, git.scratch, { baseTree, patch: spec.patch, paths });
      },
    },
  });
}
