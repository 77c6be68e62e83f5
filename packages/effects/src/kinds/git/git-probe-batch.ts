import type { GitRepo, ScratchIndexes } from "@idem/git";
import {
  appliedInReverse,
  branchAllowed,
  isSafeBranchName,
  modeChangesDone,
  patchApplies,
  rewriteTree,
  runGit,
  writeTree,
} from "@idem/git";
import type { ProbeResult } from "@idem/kit";
import { type IdemError, isIdemError } from "@idem/kit";
import { gitCommitChanges } from "../git-commit/git-commit-effect.js";
import type { GitCommitSpec } from "../git-commit/spec.js";
import { checkPatchSpec } from "../git-patch/git-patch-effect.js";
import type { GitPatchSpec } from "../git-patch/spec.js";

/** A validation error (the spec is wrong at the target): reported as a conflict, not thrown. */
export function isValidationError(e: unknown): e is IdemError {
  return isIdemError(e) && e.class === "validation";
}

/** The effects of one plan on one branch of one repository. */
export interface GitGroup {
  repo: GitRepo;
  branch: string;
  items: { spec: GitCommitSpec | GitPatchSpec; key: string }[];
}

/** What `probeGitGroup` needs besides the group, and where it writes each key's answer. */
export interface GitGroupProbe {
  scratch: ScratchIndexes;
  maxFileBytes: number;
  /** Probe each absent item as if the earlier ones had been applied. */
  simulate: boolean;
  /** Each key's answer. */
  out: Map<string, ProbeResult>;
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
export async function probeGitGroup(group: GitGroup, ctx: GitGroupProbe): Promise<void> {
  const { repo, branch, items } = group;
  const { scratch, maxFileBytes, simulate, out } = ctx;
  // In a local repository the layout (`git rev-parse`) and the head of a branch the config allows
  // are read while `git check-ref-format` checks the branch, so the scan starts sooner; the check's
  // refusal still comes first. A remote's mirror is reached only once the branch passed the check.
  const early = repo.mirror ? undefined : readHeadEarly(repo, branch);
  await repo.checkBranch(branch);
  // A branch a git.commit starts (`from`) may not exist yet: its items are probed one by one.
  await repo.syncRemote(
    branch,
    items.some((it) => isCommitSpec(it.spec) && it.spec.from !== undefined),
  );
  const head = await (early ?? repo.head(branch));
  if (head === null) {
    for (const it of items) out.set(it.key, await ctx.probeOne(it.spec, it.key));
    return;
  }
  const keys = await repo.lookupKeys(
    branch,
    head,
    items.map((it) => it.key),
  );
  // The head's tree, read only when a simulation or a patch needs it (a group of commits does not).
  let headTreeRead: Promise<string | null> | undefined;
  const tree = (): Promise<string | null> => {
    headTreeRead ??= repo.objects.commit(head).then((c) => c?.tree ?? null);
    return headTreeRead;
  };
  /** The tree the plan's earlier absent items leave (simulate), from the head's tree on. */
  let simTree: string | null | undefined;
  for (const it of items) {
    try {
      const commit = keys.get(it.key);
      if (commit) {
        out.set(it.key, { status: "present", detail: { commit } });
        continue;
      }
      // The two git kinds share a branch's scan: a commit names whole files, a patch a diff.
      if (isCommitSpec(it.spec)) {
        const changes = gitCommitChanges(it.spec, maxFileBytes);
        if (simulate) {
          if (simTree === undefined) simTree = await tree();
          simTree = await rewriteTree(repo.objects, simTree, changes);
        }
        out.set(it.key, { status: "absent", detail: { base: head } });
        continue;
      }
      const files = checkPatchSpec(it.spec, maxFileBytes);
      const spec = it.spec;
      const headTree = await tree();
      const base = simulate && simTree !== undefined ? simTree : headTree;
      const result = await scratch.probeLock.run(async (): Promise<ProbeResult> => {
        const file = await scratch.probeIndex(repo);
        await scratch.load(repo, file, base);
        const fwd = await patchApplies(repo, file, spec.patch, false);
        if (fwd.ok && !(await modeChangesDone(repo, base, files))) {
          if (simulate) {
            scratch.forget(file);
            await runGit(repo.config.path, ["apply", "--cached", "--whitespace=nowarn"], {
              input: spec.patch,
              env: { GIT_INDEX_FILE: file },
            });
            const written = await writeTree(repo, file);
            simTree = written;
            await scratch.set(file, written);
          }
          return { status: "absent", detail: { base: head } };
        }
        if (await appliedInReverse(repo, file, base, spec.patch))
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

function isCommitSpec(spec: GitCommitSpec | GitPatchSpec): spec is GitCommitSpec {
  return "files" in spec;
}

/**
 * A local repository's layout, and the head of `branch` when the config allows it and its name is
 * safe (`checkBranch` without git's own check), started at once; undefined when the branch is
 * refused (its head is then never read). A failure is left to the caller's await.
 */
function readHeadEarly(repo: GitRepo, branch: string): Promise<string | null> | undefined {
  const layout = repo.layout();
  layout.catch(() => undefined); // head() reads the layout again and reports its failure
  const { config } = repo;
  const allowed = branchAllowed(config, branch);
  if (!allowed || branch.startsWith("-") || !isSafeBranchName(branch)) return undefined;
  const head = repo.head(branch);
  head.catch(() => undefined); // awaited once the branch check passed
  return head;
}
