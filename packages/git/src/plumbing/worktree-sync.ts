import { createHash } from "node:crypto";
import {
  closeSync,
  promises as fs,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  type Stats,
} from "node:fs";
import { join } from "node:path";
import { IdemError } from "@idem/schema";
import { refuse } from "../git-checks.js";
import {
  type CacheTreeNode,
  cacheTreeValid,
  type GitIndex,
  type IndexEntry,
  parseIndex,
} from "./git-index.js";
import {
  EXEC_MODE,
  FILE_MODE,
  type ObjectFormat,
  SYNC_WRITE_LIMIT,
  TREE_MODE,
  type TreeEntry,
} from "./git-objects.js";
import { type Change, PreparedSync } from "./prepared-sync.js";
import type { RepoObjects } from "./repo-objects.js";
import { WorktreeConfig } from "./worktree-config.js";

/** What `WorktreeSync.prepare` found: a sync ready to commit, nothing to do, or git must do it. */
export type PrepareResult =
  | { kind: "ready"; sync: PreparedSync }
  | { kind: "done" }
  | { kind: "fallback"; reason: string };

function blobId(format: ObjectFormat, content: Buffer): string {
  return createHash(format).update(`blob ${content.length}\0`).update(content).digest("hex");
}

function lstatOrUndefined(file: string): Stats | undefined {
  return lstatSync(file, { throwIfNoEntry: false });
}

/** The folders on the way to `path`, the root ("") first. */
function ancestors(path: string): string[] {
  const parts = path.split("/");
  const out = [""];
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join("/"));
  return out;
}

/**
 * Keeps a checked-out branch's index and working tree in step with an effect commit without a git
 * process: what `git read-tree -m -u base commit` does for the few paths an effect touches, plus
 * the checks that keep a human's work safe. It handles the plain case only and says so otherwise
 * (`fallback`), and the caller then uses git itself (`git status` + `read-tree -m -u`):
 *
 * - no configuration that changes what git writes or how it reads the index (autocrlf, fsmonitor,
 *   split or sparse index, core.worktree, ignorecase) and no attributes files at all on the way
 *   (`.gitattributes` in the folders of the paths, `info/attributes`, the global and system files),
 *   so a blob's bytes are exactly the file's bytes;
 * - an index it can read (versions 2-4, no conflicts, no skip-worktree / intent-to-add /
 *   assume-unchanged entries, no required extension it does not know).
 *
 * Safety, under idem's repo lock and git's own `index.lock` (taken O_EXCL, as git does):
 * - staged changes: the index must equal the base commit's tree exactly (the cache tree answers for
 *   the folders git vouches for; the rest is compared entry by entry), else DIRTY_WORKTREE;
 * - each touched path: a tracked file must hold exactly the base blob's bytes (and its exec bit),
 *   a new path must not exist, and no folder on the way may be a file; anything else is left for
 *   git to judge (`fallback`), a symlink on the way is refused (SANDBOX_VIOLATION);
 * - files are written through a temporary name in the same folder and renamed, the index is written
 *   to `index.lock` and renamed; entries idem writes, and every entry git could take for racily
 *   clean, are smudged (size 0) so git compares contents instead of trusting a stat.
 */
export class WorktreeSync {
  readonly config: WorktreeConfig;

  constructor(private readonly repo: RepoObjects) {
    this.config = new WorktreeConfig(repo.path);
  }

  /**
   * Why the configuration rules out applying a patch in process (see patch-apply.ts), or null:
   * `apply.ignoreWhitespace` (git would match context loosely), an `apply.whitespace` value git
   * rejects (git apply would fail), `core.ignoreCase` (git would compare paths without case).
   */
  async applyReason(): Promise<string | null> {
    const { gitDir } = await this.repo.layout();
    return this.config.applyReason(gitDir);
  }

  /** The blob entry at `path`; undefined for none (or a folder); null for a symlink or submodule. */
  private async blobAt(tree: string | null, path: string): Promise<TreeEntry | undefined | null> {
    const e = await this.repo.entryAt(tree, path);
    if (!e || e.mode === TREE_MODE) return undefined;
    if (e.mode !== FILE_MODE && e.mode !== EXEC_MODE) return null;
    return e;
  }

  /**
   * Checks everything and takes `index.lock`; nothing in the working tree or index changes until
   * `PreparedSync.commit()`. In `recover` mode (finishing what a killed idem started) a touched path
   * may also already hold the new commit's version, and an index that already matches the new tree
   * answers `done`.
   * @throws IdemError DIRTY_WORKTREE for staged changes; LOCKED when git's index.lock is held;
   * SANDBOX_VIOLATION for a symlink on the way.
   */
  async prepare(
    baseTree: string,
    newTree: string,
    paths: string[],
    recover: boolean,
  ): Promise<PrepareResult> {
    const repo = this.repo;
    const { gitDir, workTree, format } = await repo.layout();
    if (!workTree) return { kind: "fallback", reason: "bare repository" };
    const cfg = await this.config.configReason(gitDir);
    if (cfg.reason) return { kind: "fallback", reason: cfg.reason };
    const changes: Change[] = [];
    const dirs = new Map<string, string | null>();
    const seen = new Set<string>();
    for (const path of paths) {
      if (seen.has(path)) continue;
      seen.add(path);
      for (const d of ancestors(path)) {
        const attr = d === "" ? ".gitattributes" : `${d}/.gitattributes`;
        if ((await repo.entryAt(baseTree, attr)) || (await repo.entryAt(newTree, attr)))
          return { kind: "fallback", reason: `${attr} in the tree` };
      }
      const old = await this.blobAt(baseTree, path);
      const next = await this.blobAt(newTree, path);
      if (old === null || next === null)
        return { kind: "fallback", reason: "symlink or submodule" };
      if (old?.oid === next?.oid && old?.mode === next?.mode) continue;
      changes.push({ path, old, next });
      for (const d of ancestors(path)) {
        if (dirs.has(d)) continue;
        if (d === "") dirs.set(d, newTree);
        else {
          const e = await repo.entryAt(newTree, d);
          dirs.set(d, e?.mode === TREE_MODE ? e.oid : null);
        }
      }
    }
    const indexPath = join(gitDir, "index");
    const lockPath = `${indexPath}.lock`;
    let fd: number;
    try {
      fd = openSync(lockPath, "wx", 0o666);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") {
        throw new IdemError(
          "LOCKED",
          `repo "${repo.alias}": ${lockPath} exists (a git command is using the index)`,
          { cause: e },
        );
      }
      throw e;
    }
    let open = true;
    const close = () => {
      if (!open) return;
      open = false;
      closeSync(fd);
    };
    const release = async () => {
      try {
        close();
      } catch {
        // a failed close of a descriptor we are giving up: the lock file is removed regardless
      }
      await fs.rm(lockPath, { force: true });
    };
    try {
      const r = await this.check(indexPath, {
        format,
        workTree,
        baseTree,
        newTree,
        changes,
        recover,
        fileMode: cfg.fileMode,
      });
      if (r.kind !== "ready") {
        await release();
        return r;
      }
      const sync = new PreparedSync({
        repo,
        workTree,
        format,
        index: r.index,
        indexMtimeSec: r.indexMtimeSec,
        changes,
        dirs,
        files: { fd, close, lockPath, indexPath, release },
      });
      return { kind: "ready", sync };
    } catch (e) {
      await release();
      throw e;
    }
  }

  private async check(
    indexPath: string,
    sync: {
      format: ObjectFormat;
      workTree: string;
      baseTree: string;
      newTree: string;
      changes: Change[];
      /** Finishing what a killed idem started: a path may already hold the new version. */
      recover: boolean;
      /** The repository's core.fileMode: whether the exec bit counts. */
      fileMode: boolean;
    },
  ): Promise<
    | { kind: "ready"; index: GitIndex; indexMtimeSec: number }
    | { kind: "done" }
    | { kind: "fallback"; reason: string }
  > {
    const { format, workTree, baseTree, newTree, changes, recover, fileMode } = sync;
    const repo = this.repo;
    let buf: Buffer;
    let mtimeSec: number;
    try {
      const fd = openSync(indexPath, "r");
      try {
        mtimeSec = Math.floor(fstatSync(fd).mtimeMs / 1000);
        buf = readFileSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      return { kind: "fallback", reason: "no index file" };
    }
    const parsed = parseIndex(buf, format);
    if (!parsed.ok) return { kind: "fallback", reason: parsed.reason };
    const index = parsed.index;
    const tree = await this.matchTree(index, baseTree);
    if ("mismatch" in tree) {
      if (recover) {
        const atNew = await this.matchTree(index, newTree);
        if (!("mismatch" in atNew)) return { kind: "done" };
        return { kind: "fallback", reason: "the index matches neither commit" };
      }
      throw new IdemError(
        "DIRTY_WORKTREE",
        `repo "${repo.alias}" has staged changes (${tree.mismatch}); commit or unstage them first`,
        { details: { path: tree.mismatch } },
      );
    }
    index.tree = tree.node;
    for (const c of changes) {
      const parts = c.path.split("/");
      for (let i = 1; i < parts.length; i++) {
        const sub = parts.slice(0, i).join("/");
        const st = lstatOrUndefined(join(workTree, sub));
        if (!st) break;
        if (st.isSymbolicLink())
          refuse("path", `"${c.path}" passes through the symlink ${sub} in the working tree`);
        if (!st.isDirectory()) return { kind: "fallback", reason: `${sub} is not a folder` };
      }
      const file = join(workTree, c.path);
      const st = lstatOrUndefined(file);
      if (!st) {
        if (c.old && !recover) return { kind: "fallback", reason: `${c.path} is missing` };
        if (c.old && recover && c.next) return { kind: "fallback", reason: `${c.path} is missing` };
        continue;
      }
      if (!st.isFile()) return { kind: "fallback", reason: `${c.path} is not a file` };
      const content = st.size <= SYNC_WRITE_LIMIT ? readFileSync(file) : await fs.readFile(file);
      const id = blobId(format, content);
      const exec = (st.mode & 0o100) !== 0;
      const matches = (e: TreeEntry | undefined) =>
        e !== undefined && e.oid === id && (!fileMode || exec === (e.mode === EXEC_MODE));
      if (matches(c.old) || (recover && matches(c.next))) continue;
      return { kind: "fallback", reason: `${c.path} differs from the commit` };
    }
    return { kind: "ready", index, indexMtimeSec: mtimeSec };
  }

  /**
   * Whether the index holds exactly `tree` (no staged change); with it, a fully valid cache tree
   * for it. Folders the index's cache tree vouches for are not opened.
   */
  private async matchTree(
    index: GitIndex,
    tree: string,
  ): Promise<{ node: CacheTreeNode } | { mismatch: string }> {
    const entries = index.entries;
    let pos = 0;
    const walk = async (
      oid: string,
      prefix: string,
      name: string,
      ct: CacheTreeNode | undefined,
    ): Promise<CacheTreeNode | string> => {
      if (ct && ct.oid === oid && cacheTreeValid(ct)) {
        pos += ct.entryCount;
        return structuredClone(ct);
      }
      const node: CacheTreeNode = { name, entryCount: 0, oid, children: [] };
      const start = pos;
      for (const e of await this.repo.tree(oid)) {
        const path = prefix + e.name;
        if (e.mode === TREE_MODE) {
          const child = await walk(
            e.oid,
            `${path}/`,
            e.name,
            ct?.children.find((c) => c.name === e.name),
          );
          if (typeof child === "string") return child;
          node.children.push(child);
          continue;
        }
        const ie = entries[pos];
        if (
          !ie ||
          ie.path !== path ||
          ie.oid !== e.oid ||
          (ie.stat[6] as number).toString(8) !== e.mode
        )
          return ie && ie.path < path ? ie.path : path;
        pos += 1;
      }
      node.entryCount = pos - start;
      return node;
    };
    const root = await walk(tree, "", "", index.tree ?? undefined);
    if (typeof root === "string") return { mismatch: root };
    if (pos !== entries.length) return { mismatch: (entries[pos] as IndexEntry).path };
    return { node: root };
  }
}
