import { type GitCommitSpec, GitCommitSpecSchema, IdemError } from "@idem/schema";
import type { EffectHandler, ProbeHint, ProbeResult } from "../effect-handler.js";
import { checkKey, checkMessage, checkRelativePath, refuse } from "../sandbox.js";
import type { GitRepo } from "./git-repo.js";
import type { GitTargets } from "./git-targets.js";
import { GITLINK_MODE, serializeTree, TREE_MODE, type TreeEntry } from "./plumbing/git-objects.js";

/** A file change: new bytes, an object already in the repo (with its mode), or null to delete. */
export type FileChange = {
  parts: string[];
  content: Buffer | null | { oid: string; mode: string };
};

/** Validates a git.commit spec at the target; returns its changes. @throws IdemError SANDBOX_VIOLATION */
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
      return { parts: f.path.split("/"), content };
    }
    if ("delete" in f && f.delete === true) return { parts: f.path.split("/"), content: null };
    return refuse(`files.${i}`, "must have content or delete: true");
  });
}

/**
 * Writes the new tree bottom-up from `tree` with `changes` applied, straight into the object
 * database (no index, no working tree). Refuses paths through a file, symlink or submodule of the
 * tree, and replacing a directory by a file. Returns null for an empty tree.
 */
export async function rewriteTree(
  repo: GitRepo,
  tree: string | null,
  changes: FileChange[],
): Promise<string | null> {
  const entries: TreeEntry[] = tree ? [...(await repo.tree(tree))] : [];
  const groups = new Map<string, FileChange[]>();
  for (const c of changes) {
    const name = c.parts[0] as string;
    const g = groups.get(name);
    if (g) g.push(c);
    else groups.set(name, [c]);
  }
  for (const [name, group] of groups) {
    const idx = entries.findIndex((e) => e.name === name);
    const existing = idx >= 0 ? entries[idx] : undefined;
    const direct = group.filter((c) => c.parts.length === 1);
    const deeper = group.filter((c) => c.parts.length > 1);
    if (direct.length > 0 && deeper.length > 0)
      refuse("files", `"${name}" is both a file and a directory`);
    let next: TreeEntry | undefined;
    if (direct.length > 0) {
      const c = direct[0] as FileChange;
      if (existing?.mode === TREE_MODE) refuse("files", `"${name}" is a directory`);
      if (existing?.mode === GITLINK_MODE) refuse("files", `"${name}" is a submodule`);
      const content = c.content;
      if (content !== null && "oid" in content) {
        next = { mode: content.mode, name, oid: content.oid };
      } else if (content !== null) {
        const oid = await repo.writeObject("blob", content);
        next = { mode: existing?.mode === "100755" ? "100755" : "100644", name, oid };
      }
    } else {
      if (existing && existing.mode !== TREE_MODE) {
        refuse(
          "files",
          `path goes through "${name}", which is a ${existing.mode === "120000" ? "symlink" : "file"}`,
        );
      }
      const sub = await rewriteTree(
        repo,
        existing?.oid ?? null,
        deeper.map((c) => ({ parts: c.parts.slice(1), content: c.content })),
      );
      if (sub !== null) next = { mode: TREE_MODE, name, oid: sub };
    }
    if (idx >= 0) entries.splice(idx, 1);
    if (next) entries.push(next);
  }
  if (entries.length === 0) return null;
  return repo.writeObject("tree", serializeTree(entries));
}

/** Shared by git.commit and git.patch: a present result carries the commit; absent, the probed base. */
export async function probeKey(
  repo: GitRepo,
  branch: string,
  key: string,
  hint: ProbeHint | undefined,
): Promise<ProbeResult & { head?: string | null }> {
  const found = await repo.lookupKey(branch, key, hint?.base);
  if (found.found) return { status: "present", detail: { commit: found.commit } };
  if (found.head === null && !(await repo.isEmpty())) {
    throw new IdemError("TARGET_MISSING", `repo "${repo.alias}" has no branch "${branch}"`);
  }
  return { status: "absent", detail: { base: found.head } };
}

/**
 * The base an apply must move the branch from: the probed one (and the branch must still be there),
 * or, without a probe, a probe taken now under the lock.
 */
export async function baseForApply(
  repo: GitRepo,
  branch: string,
  probed: ProbeResult | undefined,
  probeNow: () => Promise<ProbeResult>,
): Promise<{ base: string | null } | { done: Record<string, unknown> }> {
  const p = probed ?? (await probeNow());
  if (p.status === "present") return { done: p.detail };
  if (p.status === "conflict") throw new IdemError("TARGET_CONFLICT", p.reason);
  const base = p.detail.base;
  if (base !== null && typeof base !== "string") {
    throw new IdemError(
      "INVALID_STATE",
      "an absent git probe must carry detail.base (a commit or null)",
    );
  }
  const head = await repo.head(branch);
  if (head !== base) {
    throw new IdemError(
      "TARGET_MOVED",
      `repo "${repo.alias}": ${branch} moved from ${base} to ${head} since the probe`,
      {
        details: { base, head },
      },
    );
  }
  return { base };
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
  const branchOf = (spec: GitCommitSpec, repo: GitRepo) => spec.branch ?? repo.config.branch;
  const probe = async (
    spec: GitCommitSpec,
    key: string,
    hint?: ProbeHint,
  ): Promise<ProbeResult> => {
    checkKey(key);
    gitCommitChanges(spec, maxFileBytes);
    const repo = targets.get(spec.repo);
    const branch = branchOf(spec, repo);
    await repo.checkBranch(branch);
    const r = await probeKey(repo, branch, key, hint);
    if (r.status === "absent") {
      const base = r.detail.base as string | null;
      const tree = base === null ? null : ((await repo.commit(base))?.tree ?? null);
      await repo.checkTreePaths(
        tree,
        spec.files.map((f) => f.path),
      );
    }
    return r;
  };
  return {
    kind: "git.commit",
    schema: GitCommitSpecSchema,
    probeable: () => true,
    targetDedup: () => true,
    probe,
    async apply(spec, key, probed) {
      checkKey(key);
      const changes = gitCommitChanges(spec, maxFileBytes);
      const repo = targets.get(spec.repo);
      const branch = branchOf(spec, repo);
      await repo.checkBranch(branch);
      return repo.withLock(async () => {
        const b = await baseForApply(repo, branch, probed, () => probe(spec, key));
        if ("done" in b) return b.done;
        const base = b.base;
        const baseTree = base === null ? null : ((await repo.commit(base))?.tree ?? null);
        const sync = (await repo.checkedOutBranch()) === branch;
        const tree =
          (await rewriteTree(repo, baseTree, changes)) ??
          (await repo.writeObject("tree", Buffer.alloc(0)));
        const commit = await repo.writeCommit(tree, base, spec.message, key);
        await repo.publish(
          branch,
          base,
          commit,
          key,
          sync,
          spec.files.map((f) => f.path),
        );
        return { commit, base };
      });
    },
  };
}
