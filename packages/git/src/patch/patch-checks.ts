import type { GitRepo } from "../git-repo.js";
import { runGit } from "../plumbing/run-git.js";
import type { PatchFile } from "./patch-paths.js";

/** True when the patch changes modes and every such file already has its new mode in `tree`. */
export async function modeChangesDone(
  repo: GitRepo,
  tree: string | null,
  files: PatchFile[],
): Promise<boolean> {
  const changes = files.filter((f) => f.oldMode && f.newMode && f.oldMode !== f.newMode);
  if (changes.length === 0) return false;
  for (const f of changes) {
    const e = await repo.objects.entryAt(tree, (f.newPath ?? f.oldPath) as string);
    if (e?.mode !== f.newMode) return false;
  }
  return true;
}

/**
 * The reverse-patch probe: `git apply -R --check`, with copies (which git cannot reverse) checked
 * as what they leave behind: the copy's target holds the post-image of its hunks, or, for an exact
 * copy, the same blob as its source.
 */
export async function appliedInReverse(
  repo: GitRepo,
  indexFile: string,
  tree: string | null,
  patch: string,
): Promise<boolean> {
  const asModify = copiesAsModifications(patch);
  if (!asModify) return (await patchApplies(repo, indexFile, patch, true)).ok;
  for (const [from, to] of asModify.exact) {
    const a = await repo.objects.entryAt(tree, from);
    const b = await repo.objects.entryAt(tree, to);
    if (!a || !b || a.oid !== b.oid) return false;
  }
  if (asModify.patch === "") return true;
  return (await patchApplies(repo, indexFile, asModify.patch, true)).ok;
}

/**
 * Rewrites each copy section of a patch as a modification of the copy's target (same hunks), and
 * lists exact copies (no hunks) apart. Null when the patch has no copy, or a copy whose paths are
 * quoted (then git's own reverse check answers).
 */
export function copiesAsModifications(
  patch: string,
): { patch: string; exact: [string, string][] } | null {
  const sections = patch.split(/^(?=diff --git )/m);
  let any = false;
  const exact: [string, string][] = [];
  const out: string[] = [];
  for (const sec of sections) {
    const from = /^copy from (.*)$/m.exec(sec)?.[1];
    const to = /^copy to (.*)$/m.exec(sec)?.[1];
    if (from === undefined || to === undefined) {
      if (sec.startsWith("diff --git ")) out.push(sec);
      continue;
    }
    if (!/^[^"\s]+$/.test(from) || !/^[^"\s]+$/.test(to)) return null;
    any = true;
    if (!/^@@ /m.test(sec)) {
      exact.push([from, to]);
      continue;
    }
    const lines = sec.split("\n");
    const kept: string[] = [`diff --git a/${to} b/${to}`];
    let inHeader = true;
    for (const line of lines.slice(1)) {
      if (inHeader && line.startsWith("@@ ")) inHeader = false;
      if (inHeader) {
        if (/^(similarity index|copy from|copy to|dissimilarity index) /.test(line)) continue;
        if (line.startsWith("--- ")) {
          kept.push(`--- a/${to}`);
          continue;
        }
      }
      kept.push(line);
    }
    out.push(kept.join("\n"));
  }
  return any ? { patch: out.join(""), exact } : null;
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
