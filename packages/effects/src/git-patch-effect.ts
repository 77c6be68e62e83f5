import { promises as fs } from "node:fs";
import { type GitPatchSpec, GitPatchSpecSchema, IdemError } from "@idem/schema";
import type { EffectHandler, ProbeHint, ProbeResult } from "./effect-handler.js";
import { baseForApply, type FileChange, probeKey, rewriteTree } from "./git-commit-effect.js";
import { findEntry, parseIndex } from "./git-index.js";
import type { GitRepo } from "./git-repo.js";
import type { GitTargets } from "./git-targets.js";
import { Mutex } from "./mutex.js";
import { type PatchFile, parsePatchFiles, patchPaths } from "./patch-paths.js";
import { GitError, runGit } from "./run-git.js";
import { checkKey, checkMessage, refuse } from "./sandbox.js";

/** Validates a git.patch spec at the target. @throws IdemError SANDBOX_VIOLATION, INVALID_INPUT */
export function checkPatchSpec(spec: GitPatchSpec, maxFileBytes: number): PatchFile[] {
  checkMessage(spec.message);
  if (typeof spec.patch !== "string" || spec.patch.length === 0) refuse("patch", "is empty");
  if (Buffer.byteLength(spec.patch) > maxFileBytes)
    refuse("patch", `is larger than limits.maxFileBytes (${maxFileBytes})`);
  return parsePatchFiles(spec.patch);
}

interface IndexState {
  tree: string | null;
  stamp: string;
}

/**
 * Temporary index files whose content idem knows: reading a tree into one costs a git process, so
 * an index that already holds the wanted tree (checked by its stat) is reused.
 */
export class ScratchIndexes {
  private readonly states = new Map<string, IndexState>();
  readonly probeLock = new Mutex();
  private probeFile: string | undefined;

  private async stamp(file: string): Promise<string> {
    const st = await fs.stat(file).catch(() => undefined);
    return st ? `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : "none";
  }

  /** Makes `file` hold `tree` (null: empty). `locked`: the file is shared under the repo lock. */
  async load(repo: GitRepo, file: string, tree: string | null, locked = false): Promise<void> {
    const known = this.states.get(file);
    if (known && known.tree === tree && known.stamp === (await this.stamp(file))) return;
    this.states.delete(file);
    for (const [other, st] of this.states) {
      if (other !== file && st.tree === tree && st.stamp === (await this.stamp(other))) {
        // Another index already holds this tree: a copy costs microseconds, read-tree a git process.
        await fs.copyFile(other, file);
        this.states.set(file, { tree, stamp: await this.stamp(file) });
        return;
      }
    }
    const args = tree === null ? ["read-tree", "--empty"] : ["read-tree", tree];
    const env = { GIT_INDEX_FILE: file };
    await (locked ? repo.lockedGit(args, { env }) : runGit(repo.config.path, args, { env }));
    this.states.set(file, { tree, stamp: await this.stamp(file) });
  }

  /** Records that `file` now holds `tree` after idem changed it. */
  async set(file: string, tree: string | null): Promise<void> {
    this.states.set(file, { tree, stamp: await this.stamp(file) });
  }

  forget(file: string): void {
    this.states.delete(file);
  }

  async probeIndex(repo: GitRepo): Promise<string> {
    if (!this.probeFile) this.probeFile = await repo.tempIndex("probe");
    return this.probeFile;
  }
}

/** `git apply --check --cached` of `patch` (reversed with `reverse`) against an index file. */
export async function patchApplies(
  repo: GitRepo,
  indexFile: string,
  patch: string,
  reverse: boolean,
): Promise<{ ok: boolean; reason: string }> {
  const r = await runGit(
    repo.config.path,
    ["apply", "--check", "--cached", "--whitespace=nowarn", ...(reverse ? ["-R"] : [])],
    { input: patch, env: { GIT_INDEX_FILE: indexFile }, okCodes: [1, 128] },
  );
  return { ok: r.code === 0, reason: r.stderr.trim() };
}

/** Applies `patch` to the index file for real. */
async function applyToIndex(repo: GitRepo, indexFile: string, patch: string): Promise<void> {
  const pre = repo.options.durable
    ? ["-c", "core.fsync=loose-object", "-c", "core.fsyncMethod=fsync"]
    : [];
  try {
    await repo.lockedGit([...pre, "apply", "--cached", "--whitespace=nowarn"], {
      input: patch,
      env: { GIT_INDEX_FILE: indexFile },
    });
  } catch (e) {
    if (!(e instanceof GitError)) throw e;
    throw new IdemError("TARGET_CONFLICT", `the patch does not apply: ${e.result.stderr.trim()}`, {
      cause: e,
    });
  }
}

/**
 * The tree of `baseTree` with the patch's paths as a private index (after `git apply --cached`)
 * holds them: read in process instead of a `git write-tree` (falls back to it for an index it
 * cannot read).
 */
async function treeAfterApply(
  repo: GitRepo,
  indexFile: string,
  baseTree: string | null,
  paths: string[],
): Promise<string> {
  const { format } = await repo.layout();
  const parsed = parseIndex(await fs.readFile(indexFile), format);
  if (!parsed.ok) return writeTree(repo, indexFile, true);
  const changes: FileChange[] = [];
  for (const p of paths) {
    const at = findEntry(parsed.index.entries, Buffer.from(p, "utf8"));
    const e = at >= 0 ? parsed.index.entries[at] : undefined;
    changes.push({
      parts: p.split("/"),
      content: e ? { oid: e.oid, mode: (e.stat[6] as number).toString(8) } : null,
    });
  }
  return (
    (await rewriteTree(repo, baseTree, changes)) ??
    (await repo.writeObject("tree", Buffer.alloc(0)))
  );
}

export async function writeTree(repo: GitRepo, indexFile: string, locked = false): Promise<string> {
  if (locked) {
    const r = await repo.lockedGit(["write-tree"], { env: { GIT_INDEX_FILE: indexFile } });
    return r.stdout.toString().trim();
  }
  const r = await runGit(repo.config.path, ["write-tree"], { env: { GIT_INDEX_FILE: indexFile } });
  return r.stdout.toString().trim();
}

/**
 * git.patch: applies a unified diff (text only) on the branch and commits it with the trailer.
 * Present: the key's commit is reachable, or the reverse patch applies cleanly (applied by hand).
 * Conflict: neither the patch nor its reverse applies; never forced.
 */
export function createGitPatchHandler(
  targets: GitTargets,
  maxFileBytes: number,
  scratch: ScratchIndexes,
): EffectHandler<GitPatchSpec> {
  const branchOf = (spec: GitPatchSpec, repo: GitRepo) => spec.branch ?? repo.config.branch;
  const probe = async (spec: GitPatchSpec, key: string, hint?: ProbeHint): Promise<ProbeResult> => {
    checkKey(key);
    const files = checkPatchSpec(spec, maxFileBytes);
    const repo = targets.get(spec.repo);
    const branch = branchOf(spec, repo);
    await repo.checkBranch(branch);
    const byKey = await probeKey(repo, branch, key, hint);
    if (byKey.status !== "absent") return byKey;
    const head = byKey.detail.base as string | null;
    const tree = head === null ? null : ((await repo.commit(head))?.tree ?? null);
    await repo.checkTreePaths(tree, patchPaths(files));
    return scratch.probeLock.run(async () => {
      const file = await scratch.probeIndex(repo);
      await scratch.load(repo, file, tree);
      const fwd = await patchApplies(repo, file, spec.patch, false);
      if (fwd.ok) return { status: "absent", detail: { base: head } };
      const rev = await patchApplies(repo, file, spec.patch, true);
      if (rev.ok)
        return { status: "present", detail: { commit: null, reversed: true, base: head } };
      return {
        status: "conflict",
        reason: `the patch does not apply to ${head}, nor in reverse: ${fwd.reason}`,
      };
    });
  };
  return {
    kind: "git.patch",
    schema: GitPatchSpecSchema,
    probeable: () => true,
    targetDedup: () => true,
    probe,
    async apply(spec, key, probed) {
      checkKey(key);
      const files = checkPatchSpec(spec, maxFileBytes);
      const repo = targets.get(spec.repo);
      const branch = branchOf(spec, repo);
      await repo.checkBranch(branch);
      return repo.withLock(async () => {
        const b = await baseForApply(repo, branch, probed, () => probe(spec, key));
        if ("done" in b) return b.done;
        const base = b.base;
        const baseTree = base === null ? null : ((await repo.commit(base))?.tree ?? null);
        await repo.checkTreePaths(baseTree, patchPaths(files));
        const sync = (await repo.checkedOutBranch()) === branch;
        const file = await repo.applyIndex();
        await scratch.load(repo, file, baseTree, true);
        scratch.forget(file);
        await applyToIndex(repo, file, spec.patch);
        const tree = await treeAfterApply(repo, file, baseTree, patchPaths(files));
        await scratch.set(file, tree);
        const commit = await repo.writeCommit(tree, base, spec.message, key);
        await repo.publish(branch, base, commit, key, sync, patchPaths(files));
        return { commit, base };
      });
    },
  };
}
