import { readFileSync } from "node:fs";
import { IdemError } from "@idem/schema";
import type { GitRepo } from "../git-repo.js";
import { findEntry, type ParsedIndex, parseIndex } from "../plumbing/git-index.js";
import { EXEC_MODE, FILE_MODE, TREE_MODE } from "../plumbing/git-objects.js";
import { GitError, runGit } from "../plumbing/run-git.js";
import { type FileChange, treeWith } from "../plumbing/tree-writer.js";
import { applyPlainPatch } from "./patch-apply.js";
import { type BaseFile, type PlainResult, parsePlainPatch } from "./patch-parse.js";
import { changedOutside, strayPathError } from "./patch-scope.js";
import type { PatchChange, ScratchIndexes } from "./scratch-indexes.js";

/** What `tree` holds at `path`, for the in-process apply. */
async function baseFileAt(repo: GitRepo, tree: string | null, path: string): Promise<BaseFile> {
  const parts = path.split("/");
  let cur = tree;
  for (let i = 0; i < parts.length; i++) {
    if (cur === null) return { kind: "absent" };
    const e = (await repo.objects.tree(cur)).find((x) => x.name === parts[i]);
    if (!e) return { kind: "absent" };
    if (i < parts.length - 1) {
      if (e.mode !== TREE_MODE) return { kind: "other" };
      cur = e.oid;
      continue;
    }
    if (e.mode !== FILE_MODE && e.mode !== EXEC_MODE) return { kind: "other" };
    const o = await repo.objects.catFile.read(e.oid);
    if (o?.type !== "blob") return { kind: "other" };
    return { kind: "file", mode: e.mode, content: o.content };
  }
  return { kind: "other" };
}

/**
 * `git apply --cached` of a plain patch on `tree`, done in process (patch-apply.ts): the files it
 * leaves, or null when git itself must answer (outside the plain subset, a configuration that
 * changes how git applies, or a patch that does not apply). Only paths the sandbox checked
 * (`allowed`) are ever written.
 */
export async function applyInProcess(
  repo: GitRepo,
  tree: string | null,
  patch: string,
  allowed: string[],
): Promise<PlainResult[] | null> {
  const sections = parsePlainPatch(Buffer.from(patch, "utf8"));
  if (!sections) return null;
  const ok = new Set(allowed);
  if (!sections.every((s) => ok.has(s.path))) return null;
  if ((await repo.worktree.applyReason()) !== null) return null;
  const base = new Map<string, BaseFile>();
  for (const s of sections) base.set(s.path, await baseFileAt(repo, tree, s.path));
  return applyPlainPatch(sections, (p) => base.get(p) ?? { kind: "other" });
}

/** The tree of `baseTree` with an in-process apply's files written (blobs first, then trees). */
async function treeWithResults(
  repo: GitRepo,
  baseTree: string | null,
  results: PlainResult[],
): Promise<string> {
  const changes: FileChange[] = [];
  for (const r of results) {
    changes.push({
      parts: r.path.split("/"),
      content:
        r.content === null
          ? null
          : { oid: await repo.objects.writeObject("blob", r.content), mode: r.mode },
    });
  }
  return treeWith(repo.objects, baseTree, changes);
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
  before: ParsedIndex,
): Promise<string> {
  const { format } = await repo.layout();
  const parsed = parseIndex(readFileSync(indexFile), format);
  if (!parsed.ok) return writeTree(repo, indexFile, true);
  if (before.ok) {
    const stray = changedOutside(before.index.entries, parsed.index.entries, new Set(paths));
    if (stray !== undefined) throw strayPathError(stray);
  }
  const changes: FileChange[] = [];
  for (const p of paths) {
    const at = findEntry(parsed.index.entries, Buffer.from(p, "utf8"));
    const e = at >= 0 ? parsed.index.entries[at] : undefined;
    changes.push({
      parts: p.split("/"),
      content: e ? { oid: e.oid, mode: (e.stat[6] as number).toString(8) } : null,
    });
  }
  return treeWith(repo.objects, baseTree, changes);
}

/**
 * `git write-tree` of an index file (under the repo lock with `locked`): one git process.
 * @throws GitError when git refuses (an index with conflicts).
 */
export async function writeTree(repo: GitRepo, indexFile: string, locked = false): Promise<string> {
  if (locked) {
    const r = await repo.lockedGit(["write-tree"], { env: { GIT_INDEX_FILE: indexFile } });
    return r.stdout.toString().trim();
  }
  const r = await runGit(repo.config.path, ["write-tree"], { env: { GIT_INDEX_FILE: indexFile } });
  return r.stdout.toString().trim();
}

/**
 * The tree of `baseTree` with `patch` applied, under the repo lock: the probe's remembered result
 * when there is one, else the in-process apply, else `git apply --cached` on the shared apply index
 * read back in process.
 * @throws IdemError TARGET_CONFLICT when git finds that the patch does not apply; INVALID_INPUT
 * when git changes a path the patch reader did not list (nothing is committed then).
 */
export function patchedTree(
  repo: GitRepo,
  scratch: ScratchIndexes,
  change: PatchChange,
): Promise<string> {
  const { baseTree, patch, paths } = change;
  return scratch.applied(repo, baseTree, patch, async () => {
    const plain = await applyInProcess(repo, baseTree, patch, paths);
    if (plain) return treeWithResults(repo, baseTree, plain);
    const file = await repo.applyIndex();
    await scratch.load(repo, file, baseTree, true);
    scratch.forget(file);
    const before = parseIndex(readFileSync(file), (await repo.layout()).format);
    await applyToIndex(repo, file, patch);
    const t = await treeAfterApply(repo, file, baseTree, paths, before);
    await scratch.set(file, t);
    return t;
  });
}
