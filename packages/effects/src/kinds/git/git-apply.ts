import type { GitRepo, ObjectWriter } from "@idem/git";
import type { ApplyOrder, ProbeHint, ProbeResult } from "@idem/kit";
import { IdemError } from "@idem/kit";
import type { GitTargets } from "./git-targets.js";

/** What every git effect names: a repo alias and, optionally, a branch the repo allows. */
export interface GitBranchSpec {
  repo: string;
  branch?: string | undefined;
}

/** The repository and branch a git effect acts on, checked. */
export interface GitTarget {
  repo: GitRepo;
  branch: string;
}

/**
 * Resolves the repo alias and the branch (the repo's default when the spec names none) of a git
 * effect and checks the branch at the target.
 * @throws IdemError UNKNOWN_ALIAS, SANDBOX_VIOLATION, TARGET_MISSING (not a repository).
 */
export async function gitTarget(targets: GitTargets, spec: GitBranchSpec): Promise<GitTarget> {
  const repo = targets.get(spec.repo);
  const branch = spec.branch ?? repo.config.branch;
  // The layout is needed next: resolved meanwhile (each is one git process the first time). A
  // branch the sandbox refuses is refused first, whatever the layout says.
  const [checked, layout] = await Promise.allSettled([repo.checkBranch(branch), repo.layout()]);
  if (checked.status === "rejected") throw checked.reason;
  if (layout.status === "rejected") throw layout.reason;
  return { repo, branch };
}

/**
 * The probe every git effect starts with: the key on the branch, and when it is absent, the
 * probed head's tree with `paths` checked against it.
 * @throws IdemError TARGET_MISSING, SANDBOX_VIOLATION (a path through a symlink, file or submodule).
 */
export async function probeOnBranch(
  { repo, branch }: GitTarget,
  key: string,
  hint: ProbeHint | undefined,
  paths: string[],
  from?: string,
): Promise<{ result: ProbeResult; base?: string | null; tree?: string | null }> {
  const result = await repo.probeKey(branch, key, hint, from);
  if (result.status !== "absent") return { result };
  const base = result.detail.base as string | null;
  // A branch still to be made starts with the tree of the branch it starts from.
  const start = typeof result.detail.from === "string" ? result.detail.from : base;
  const tree = await repo.objects.treeOf(start);
  await repo.checkTreePaths(tree, paths);
  return { result, base, tree };
}

/**
 * What a git probe's answer leaves an apply: present (its detail: nothing to write), or absent at
 * `base` (the head it probed, a commit or null).
 * @throws IdemError TARGET_CONFLICT (the probe said conflict), INVALID_STATE (no detail.base).
 */
function probedBase(p: ProbeResult): { base: string | null } | { done: Record<string, unknown> } {
  if (p.status === "present") return { done: p.detail };
  if (p.status === "conflict") throw new IdemError("TARGET_CONFLICT", p.reason);
  const base = p.detail.base;
  if (base !== null && typeof base !== "string") {
    throw new IdemError(
      "INVALID_STATE",
      "an absent git probe must carry detail.base (a commit or null)",
    );
  }
  return { base };
}

/**
 * The base an apply must move the branch from: the probed one (and the branch must still be there),
 * or, without a probe, a probe taken now under the lock.
 * @throws IdemError TARGET_CONFLICT (the probe said conflict), TARGET_MOVED, INVALID_STATE.
 */
async function baseForApply(
  { repo, branch }: GitTarget,
  probed: ProbeResult | undefined,
  probeNow: () => Promise<ProbeResult>,
): Promise<{ base: string | null } | { done: Record<string, unknown> }> {
  const p = probed ?? (await probeNow());
  const read = probedBase(p);
  if ("done" in read) return read;
  const base = read.base;
  const head = await repo.head(branch);
  if (head !== base) {
    throw new IdemError(
      "TARGET_MOVED",
      `repo "${repo.alias}": ${branch} moved from ${base} to ${head} since the probe`,
      { details: { base, head } },
    );
  }
  return { base };
}

/** What one git effect changes: its paths, and how its tree is built from the base tree. */
export interface GitChange {
  message: string;
  /** Every path the commit changes. */
  paths: string[];
  /**
   * Writes the new root tree from the base tree (null: none), under the repo lock, through
   * `objects` when given (a local branch's batch; else the repository's).
   */
  tree(baseTree: string | null, objects?: ObjectWriter): Promise<string>;
  /**
   * `tree` runs no git process: it reads and writes objects in process only, through `objects`
   * (a local branch's batch may then hold them for one pack, see BranchQueue).
   */
  inProcess?: boolean;
  /** A branch's queued applies keep this order between runs (a remote's pushes, a local batch). */
  order?: ApplyOrder | undefined;
}

/** One git effect to apply: its key, the probe's answer (or none), a probe to make now, its change. */
export interface BranchApply {
  key: string;
  probed: ProbeResult | undefined;
  probeNow: () => Promise<ProbeResult>;
  change: GitChange;
}

/**
 * The one apply of the git effects. Probed (the interpreter's way): the commit joins the branch's
 * queue (`GitRepo.queueCommit`), built under the repo lock on the head with the effects waiting at
 * the same time and published with them in one ref transaction, answered once it is on the branch.
 * Without a probe: under the repo lock, a probe now, then the tree, then one commit on that base
 * published onto the branch by compare-and-swap with its key (`GitRepo.commitOnto`). A key
 * already present answers its recorded detail and writes nothing, so a repeat after a crash is
 * safe.
 * @throws IdemError TARGET_MOVED, TARGET_CONFLICT, DIRTY_WORKTREE, LOCKED, SANDBOX_VIOLATION,
 * ORDER_BLOCKED.
 */
export function applyOnBranch(
  target: GitTarget,
  effect: BranchApply,
): Promise<Record<string, unknown>> {
  const { repo, branch } = target;
  const { key, probed, probeNow, change } = effect;
  if (repo.mirror) return applyRemote(target, effect);
  if (probed) return applyQueued(target, effect, probed);
  return repo.withLock(async () => {
    const b = await baseForApply(target, probed, probeNow);
    if ("done" in b) return b.done;
    const base = b.base;
    const tree = await change.tree(await repo.objects.treeOf(base));
    const commit = await repo.commitOnto({
      branch,
      base,
      tree,
      message: change.message,
      key,
      paths: change.paths,
    });
    return { commit, base };
  });
}

/**
 * A probed local apply: the probe's answer (present: its detail, nothing written), else the
 * commit queued on the branch from the probed head.
 * @throws IdemError TARGET_CONFLICT, TARGET_MOVED, DIRTY_WORKTREE, LOCKED, INVALID_STATE,
 * ORDER_BLOCKED.
 */
async function applyQueued(
  { repo, branch }: GitTarget,
  { key, change }: BranchApply,
  probed: ProbeResult,
): Promise<Record<string, unknown>> {
  const read = probedBase(probed);
  if ("done" in read) return read.done;
  const base = read.base;
  return repo.queueCommit(branch, {
    key,
    base,
    paths: change.paths,
    // The probe checked the paths at its head; the commit may go onto a later one (a symlink or a
    // file where a folder was is then the queue's TARGET_MOVED, and the next probe says why).
    async tree(baseTree, objects) {
      await repo.checkTreePaths(baseTree, change.paths);
      return change.tree(baseTree, objects);
    },
    inProcess: change.inProcess,
    message: change.message,
    order: change.order,
  });
}

/**
 * A remote's apply: the probed remote tip (or a probe now), then the commit built on the mirror's
 * tip and pushed by compare-and-swap with the effects waiting at the same time.
 * @throws IdemError TARGET_CONFLICT, TARGET_MOVED, UNAVAILABLE, INVALID_STATE, ORDER_BLOCKED.
 */
async function applyRemote(
  { repo, branch }: GitTarget,
  { key, probed, probeNow, change }: BranchApply,
): Promise<Record<string, unknown>> {
  let p = probed ?? (await probeNow());
  if (p.status === "absent" && p.detail.base === null && typeof p.detail.from === "string") {
    // A branch per job: made on the remote at the tip of the branch it starts from, then the
    // commit goes onto it as onto any branch. Killed in between, the next probe finds the branch
    // without the key and goes on from there.
    await repo.createRemoteBranch(branch, p.detail.from);
    p = await probeNow();
  }
  const read = probedBase(p);
  if ("done" in read) return read.done;
  const base = read.base;
  return repo.pushEffect(branch, {
    key,
    base,
    paths: change.paths,
    tree: change.tree,
    message: change.message,
    order: change.order,
  });
}
