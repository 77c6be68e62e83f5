import { createHash, randomBytes } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  promises as fs,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { type GitPatchSpec, GitPatchSpecSchema, IdemError } from "@idem/schema";
import type { EffectHandler, ProbeHint, ProbeResult } from "../effect-handler.js";
import { checkKey, checkMessage, refuse } from "../sandbox.js";
import { baseForApply, type FileChange, probeKey, rewriteTree } from "./git-commit-effect.js";
import type { GitRepo } from "./git-repo.js";
import type { GitTargets } from "./git-targets.js";
import {
  applyPlainPatch,
  type BaseFile,
  type PlainResult,
  parsePlainPatch,
} from "./patch/patch-apply.js";
import { type PatchFile, parsePatchFiles, patchPaths } from "./patch/patch-paths.js";
import { findEntry, parseIndex } from "./plumbing/git-index.js";
import { EXEC_MODE, FILE_MODE, TREE_MODE } from "./plumbing/git-objects.js";
import { Mutex } from "./plumbing/mutex.js";
import { GitError, runGit } from "./plumbing/run-git.js";

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
    const st = statSync(file, { throwIfNoEntry: false });
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
        copyFileSync(other, file);
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

  /** Results of a probe's forward apply, by repo, base tree and patch: what apply reuses. */
  private readonly results = new Map<string, { changes: FileChange[]; out: string; gen: number }>();
  /** Bumped each time a probe rewrites its result index. */
  private generation = 0;
  private objectDirs = new Map<string, string>();

  /**
   * The probe's forward check, done for real on a copy of the probe index with a private object
   * folder (the repo's objects as an alternate), so nothing is written to the target; a success is
   * remembered for `applied`.
   */
  async tryApply(
    repo: GitRepo,
    file: string,
    tree: string | null,
    patch: string,
    paths: string[],
  ): Promise<{ ok: boolean; reason: string }> {
    const { gitDir, format } = await repo.layout();
    let objects = this.objectDirs.get(repo.alias);
    if (!objects) {
      objects = `${await repo.tempIndex("objects")}.d`;
      await fs.mkdir(objects, { recursive: true });
      this.objectDirs.set(repo.alias, objects);
    }
    const out = `${file}.result`;
    this.states.delete(out);
    const gen = ++this.generation;
    if (gen % 256 === 0) {
      // Blobs of probes never applied: start the private folder afresh (an apply whose blobs are
      // gone recomputes its tree).
      this.results.clear();
      this.loose.clear();
      await fs.rm(objects, { recursive: true, force: true });
      await fs.mkdir(objects, { recursive: true });
    }
    copyFileSync(file, out);
    const r = await runGit(repo.config.path, ["apply", "--cached", "--whitespace=nowarn"], {
      input: patch,
      env: {
        GIT_INDEX_FILE: out,
        GIT_OBJECT_DIRECTORY: objects,
        GIT_ALTERNATE_OBJECT_DIRECTORIES: join(gitDir, "objects"),
      },
      okCodes: [1, 128],
    });
    if (r.code !== 0) return { ok: false, reason: r.stderr.trim() };
    const parsed = parseIndex(readFileSync(out), format);
    if (parsed.ok) {
      const changes: FileChange[] = [];
      for (const p of paths) {
        const at = findEntry(parsed.index.entries, Buffer.from(p, "utf8"));
        const e = at >= 0 ? parsed.index.entries[at] : undefined;
        if (e) {
          // Move the blobs git wrote to the private folder along when the apply uses them.
          const loose = join(objects, e.oid.slice(0, 2), e.oid.slice(2));
          if (existsSync(loose)) this.loose.set(e.oid, loose);
        }
        changes.push({
          parts: p.split("/"),
          content: e ? { oid: e.oid, mode: (e.stat[6] as number).toString(8) } : null,
        });
      }
      if (this.results.size > 64) this.results.clear();
      this.results.set(resultKey(repo, tree, patch), { changes, out, gen });
    }
    return { ok: true, reason: "" };
  }

  private readonly loose = new Map<string, string>();

  /**
   * The tree of `tree` with `patch` applied: from the remembered probe result when there is one
   * (its blobs copied into the repo), else from `compute`.
   */
  async applied(
    repo: GitRepo,
    tree: string | null,
    patch: string,
    compute: () => Promise<string>,
  ): Promise<string> {
    const k = resultKey(repo, tree, patch);
    const result = this.results.get(k);
    if (!result) return compute();
    this.results.delete(k);
    const changes = result.changes;
    const { gitDir } = await repo.layout();
    for (const c of changes) {
      if (c.content === null || !("oid" in c.content)) continue;
      const src = this.loose.get(c.content.oid);
      if (!src) continue;
      const ok = await copyLooseObject(
        src,
        join(gitDir, "objects"),
        c.content.oid,
        repo.options.durable,
      );
      if (!ok) return compute();
      this.loose.delete(c.content.oid);
      rmSync(src, { force: true });
    }
    const after =
      (await rewriteTree(repo, tree, changes)) ?? (await repo.writeObject("tree", Buffer.alloc(0)));
    // The probe's result index holds the new tree: the next probe copies it instead of a read-tree.
    await this.probeLock.run(async () => {
      if (this.generation === result.gen) await this.set(result.out, after);
    });
    return after;
  }

  async probeIndex(repo: GitRepo): Promise<string> {
    if (!this.probeFile) this.probeFile = await repo.tempIndex("probe");
    return this.probeFile;
  }
}

function resultKey(repo: GitRepo, tree: string | null, patch: string): string {
  return `${repo.alias}\0${tree}\0${createHash("sha256").update(patch).digest("hex")}`;
}

/** Copies a loose object file into the repo (temp name + link, as git does). False if it is gone. */
async function copyLooseObject(
  src: string,
  objectsDir: string,
  oid: string,
  durable: boolean,
): Promise<boolean> {
  const dir = join(objectsDir, oid.slice(0, 2));
  const dest = join(dir, oid.slice(2));
  if (existsSync(dest)) return true;
  let data: Buffer;
  try {
    data = readFileSync(src);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `tmp_obj_idem_${randomBytes(6).toString("hex")}`);
  const fh = await fs.open(tmp, "wx", 0o444);
  try {
    writeSync(fh.fd, data);
    if (durable) await fh.datasync();
  } finally {
    await fh.close();
  }
  try {
    linkSync(tmp, dest);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
      renameSync(tmp, dest);
      return true;
    }
  }
  rmSync(tmp, { force: true });
  return true;
}

/** True when the patch changes modes and every such file already has its new mode in `tree`. */
export async function modeChangesDone(
  repo: GitRepo,
  tree: string | null,
  files: PatchFile[],
): Promise<boolean> {
  const changes = files.filter((f) => f.oldMode && f.newMode && f.oldMode !== f.newMode);
  if (changes.length === 0) return false;
  for (const f of changes) {
    const e = await repo.entryAt(tree, (f.newPath ?? f.oldPath) as string);
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
    const a = await repo.entryAt(tree, from);
    const b = await repo.entryAt(tree, to);
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

/** What `tree` holds at `path`, for the in-process apply. */
async function baseFileAt(repo: GitRepo, tree: string | null, path: string): Promise<BaseFile> {
  const parts = path.split("/");
  let cur = tree;
  for (let i = 0; i < parts.length; i++) {
    if (cur === null) return { kind: "absent" };
    const e = (await repo.tree(cur)).find((x) => x.name === parts[i]);
    if (!e) return { kind: "absent" };
    if (i < parts.length - 1) {
      if (e.mode !== TREE_MODE) return { kind: "other" };
      cur = e.oid;
      continue;
    }
    if (e.mode !== FILE_MODE && e.mode !== EXEC_MODE) return { kind: "other" };
    const o = await repo.catFile.read(e.oid);
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
          : { oid: await repo.writeObject("blob", r.content), mode: r.mode },
    });
  }
  return (
    (await rewriteTree(repo, baseTree, changes)) ??
    (await repo.writeObject("tree", Buffer.alloc(0)))
  );
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
  const parsed = parseIndex(readFileSync(indexFile), format);
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
    // The plain patches git diff writes are applied in process, without a git process; git
    // answers for the rest and for every patch that does not apply forward.
    if (await applyInProcess(repo, tree, spec.patch, patchPaths(files)))
      return { status: "absent", detail: { base: head } };
    return scratch.probeLock.run(async () => {
      const file = await scratch.probeIndex(repo);
      await scratch.load(repo, file, tree);
      const fwd = await scratch.tryApply(repo, file, tree, spec.patch, patchPaths(files));
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
        const tree = await scratch.applied(repo, baseTree, spec.patch, async () => {
          const plain = await applyInProcess(repo, baseTree, spec.patch, patchPaths(files));
          if (plain) return treeWithResults(repo, baseTree, plain);
          const file = await repo.applyIndex();
          await scratch.load(repo, file, baseTree, true);
          scratch.forget(file);
          await applyToIndex(repo, file, spec.patch);
          const t = await treeAfterApply(repo, file, baseTree, patchPaths(files));
          await scratch.set(file, t);
          return t;
        });
        const commit = await repo.writeCommit(tree, base, spec.message, key);
        await repo.publish(branch, base, commit, key, sync, patchPaths(files));
        return { commit, base };
      });
    },
  };
}
