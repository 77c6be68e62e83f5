import { type GitCommitSpec, type GitPatchSpec, type IdemError, isIdemError } from "@idem/schema";
import type { ProbeResult } from "../effect-handler.js";
import { gitCommitChanges } from "./git-commit-effect.js";
import { checkPatchSpec } from "./git-patch-effect.js";
import type { GitRepo } from "./git-repo.js";
import { appliedInReverse, modeChangesDone, patchApplies } from "./patch/patch-checks.js";
import { writeTree } from "./patch/patch-trees.js";
import type { ScratchIndexes } from "./patch/scratch-indexes.js";
import { runGit } from "./plumbing/run-git.js";
import { rewriteTree } from "./plumbing/tree-writer.js";

/** A validation error (the spec is wrong at the target): reported as a conflict, not thrown. */
export function isValidationError(e: unknown): e is IdemError {
  return isIdemError(e) && e.class === "validation";
}

/** What `probeGitGroup` needs besides the group. */
export interface GitGroupProbe {
  scratch: ScratchIndexes;
  maxFileBytes: number;
  /** The single-effect probe, for a branch that does not exist yet. */
  probeOne(spec: GitCommitSpec | GitPatchSpec, key: string): Promise<ProbeResult>;
}

/**
 * Replay of many git effects on one branch: one scan of the branch answers every key. With
 * `simulate`, each absent effect is applied to a scratch tree (commits) or a scratch index
 * (patches) so that the next one is probed as if it had been applied. Never changes the target.
 * An item whose spec is invalid at the target is reported as a conflict carrying the error.
 * @throws IdemError TARGET_MISSING, UNAVAILABLE and other non-validation failures.
 */
export async function probeGitGroup(
  repo: GitRepo,
  branch: string,
  items: { spec: GitCommitSpec | GitPatchSpec; key: string }[],
  simulate: boolean,
  out: Map<string, ProbeResult>,
  ctx: GitGroupProbe,
): Promise<void> {
  const { scratch, maxFileBytes } = ctx;
  await repo.checkBranch(branch);
  await repo.syncRemote(branch);
  const head = await repo.head(branch);
  if (head === null) {
    for (const it of items) out.set(it.key, await ctx.probeOne(it.spec, it.key));
    return;
  }
  const keys = await repo.lookupKeys(
    branch,
    head,
    items.map((it) => it.key),
  );
  const headTree = (await repo.objects.commit(head))?.tree ?? null;
  let simTree = headTree;
  for (const it of items) {
    try {
      const commit = keys.get(it.key);
      if (commit) {
        out.set(it.key, { status: "present", detail: { commit } });
        continue;
      }
      if (it.spec.kind === "git.commit") {
        const changes = gitCommitChanges(it.spec, maxFileBytes);
        if (simulate) simTree = await rewriteTree(repo.objects, simTree, changes);
        out.set(it.key, { status: "absent", detail: { base: head } });
        continue;
      }
      const files = checkPatchSpec(it.spec, maxFileBytes);
      const spec = it.spec;
      const result = await scratch.probeLock.run(async (): Promise<ProbeResult> => {
        const file = await scratch.probeIndex(repo);
        await scratch.load(repo, file, simulate ? simTree : headTree);
        const fwd = await patchApplies(repo, file, spec.patch, false);
        const simTreeNow = simulate ? simTree : headTree;
        if (fwd.ok && !(await modeChangesDone(repo, simTreeNow, files))) {
          if (simulate) {
            scratch.forget(file);
            await runGit(repo.config.path, ["apply", "--cached", "--whitespace=nowarn"], {
              input: spec.patch,
              env: { GIT_INDEX_FILE: file },
            });
            simTree = await writeTree(repo, file);
            await scratch.set(file, simTree);
          }
          return { status: "absent", detail: { base: head } };
        }
        if (await appliedInReverse(repo, file, simTreeNow, spec.patch))
          return { status: "present", detail: { commit: null, reversed: true, base: head } };
        return {
          status: "conflict",
          reason: `the patch does not apply, nor in reverse: ${fwd.reason}`,
        };
      });
      out.set(it.key, result);
    } catch (e) {
      if (!isValidationError(e)) throw e;
      out.set(it.key, { status: "conflict", reason: `${e.code}: ${e.message}` });
    }
  }
}
