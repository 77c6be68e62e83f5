import { randomBytes } from "node:crypto";
import {
  promises as fs,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  type Clock,
  EFFECT_TRAILER,
  IdemError,
  isSafeBranchName,
  type RepoConfig,
  unsafeRelativePath,
} from "@idem/schema";
import { messageWithTrailer, refComponent, refuse, trailerKeys } from "../sandbox.js";
import { CatFileProcess } from "./plumbing/cat-file-process.js";
import { FileLock } from "./plumbing/file-lock.js";
import {
  type ObjectFormat,
  parseCommit,
  parseTree,
  serializeCommit,
  type TreeEntry,
  writeLooseObject,
} from "./plumbing/git-objects.js";
import { RefUpdater } from "./plumbing/ref-updater.js";
import { GitError, type RunGitOptions, runGit } from "./plumbing/run-git.js";
import { type PreparedSync, tempName, WorktreeSync } from "./plumbing/worktree-sync.js";

export interface GitRepoOptions {
  clock: Clock;
  /** fsync loose objects and refs (core.fsync=reference) before apply returns. Default true. */
  durable: boolean;
  lockTimeoutMs: number;
  lockLingerMs: number;
  /** Folder for this process's temporary index files. */
  tmpDir: () => Promise<string>;
}

/** A lookup that answered where an effect key stands on a branch. */
export type KeyLookup = { found: true; commit: string } | { found: false; head: string | null };

/** What a crash between moving the ref and syncing the working tree left to finish. */
interface PendingMarker {
  branch: string;
  base: string | null;
  commit: string;
  refs: string[];
  sync: boolean;
  /** The paths the commit changes and the temporary-name nonce of the in-process sync. */
  paths?: string[];
  nonce?: string;
}

/** Where a branch's key index lives: refs/idem/b/<encoded branch>. */
function keyPrefix(branch: string): string {
  return `refs/idem/b/${refComponent(branch)}/k`;
}
/** The ref that indexes an effect key on a branch: refs/idem/b/<branch>/k/<encoded key>. */
export function keyRef(branch: string, key: string): string {
  return `${keyPrefix(branch)}/${refComponent(key)}`;
}
/**
 * The branch watermark: every key commit at or below it has its key ref, and every key ref of the
 * branch points at or below it (see GitRepo.catchUpLines).
 */
export function watermarkRef(branch: string): string {
  return `refs/idem/b/${refComponent(branch)}/w`;
}

const ZERO = (format: ObjectFormat) => "0".repeat(format === "sha1" ? 40 : 64);

/**
 * One configured repository: its layout, a long-lived `cat-file --batch`, idem's lock, and the
 * plumbing every git effect shares (key lookups, tree building, compare-and-swap ref moves,
 * working tree sync and crash recovery).
 */
export class GitRepo {
  readonly catFile: CatFileProcess;
  readonly worktree: WorktreeSync;
  private lock: FileLock | undefined;
  private updater: RefUpdater | undefined;
  private info:
    | Promise<{ gitDir: string; bare: boolean; format: ObjectFormat; workTree: string | null }>
    | undefined;
  private readonly treeCache = new Map<string, TreeEntry[]>();
  private readonly branchOk = new Map<string, Promise<void>>();
  private readonly scanCache = new Map<string, { head: string; keys: Map<string, string> }>();

  constructor(
    readonly alias: string,
    readonly config: RepoConfig,
    readonly options: GitRepoOptions,
  ) {
    this.catFile = new CatFileProcess(config.path);
    this.worktree = new WorktreeSync(this);
  }

  /** Resolves the repository layout once. @throws IdemError TARGET_MISSING when it is not a repo. */
  layout(): Promise<{
    gitDir: string;
    bare: boolean;
    format: ObjectFormat;
    workTree: string | null;
  }> {
    if (!this.info) {
      this.info = (async () => {
        const path = this.config.path;
        let real: string;
        try {
          real = await fs.realpath(path);
        } catch (e) {
          throw new IdemError("TARGET_MISSING", `repo "${this.alias}": ${path} does not exist`, {
            cause: e,
          });
        }
        let out: string;
        try {
          out = (
            await runGit(real, [
              "rev-parse",
              "--absolute-git-dir",
              "--is-bare-repository",
              "--show-object-format",
            ])
          ).stdout.toString();
        } catch (e) {
          throw new IdemError(
            "TARGET_MISSING",
            `repo "${this.alias}": ${path} is not a git repository`,
            { cause: e },
          );
        }
        const [gitDir, bareText, formatText] = out.trim().split("\n");
        const bare = bareText === "true";
        let workTree: string | null = null;
        if (bare) {
          if ((await fs.realpath(gitDir as string)) !== real) {
            throw new IdemError(
              "TARGET_MISSING",
              `repo "${this.alias}": ${path} is not the repository's own folder`,
            );
          }
        } else {
          const top = (await runGit(real, ["rev-parse", "--show-toplevel"])).stdout
            .toString()
            .trim();
          if ((await fs.realpath(top)) !== real) {
            throw new IdemError(
              "TARGET_MISSING",
              `repo "${this.alias}": ${path} is inside a repository, not its top`,
            );
          }
          workTree = real;
        }
        const format: ObjectFormat = formatText === "sha256" ? "sha256" : "sha1";
        this.lock = new FileLock(join(gitDir as string, "idem", "lock"), {
          timeoutMs: this.options.lockTimeoutMs,
          lingerMs: this.options.lockLingerMs,
          beforeUnlock: () => {
            // The updater holds the lock's descriptor: it must go for the lock to be released.
            this.updater?.close();
            this.updater = undefined;
          },
        });
        return { gitDir: gitDir as string, bare, format, workTree };
      })();
      this.info.catch(() => {
        this.info = undefined;
      });
    }
    return this.info;
  }

  /**
   * Checks a branch at the target: allowed by the repo's config, a safe name, and accepted by
   * `git check-ref-format --branch`.
   * @throws IdemError SANDBOX_VIOLATION otherwise.
   */
  async checkBranch(branch: string): Promise<void> {
    if (branch !== this.config.branch && !this.config.branches.includes(branch)) {
      refuse("branch", `"${branch}" is not allowed for repo "${this.alias}"`);
    }
    if (branch.startsWith("-") || !isSafeBranchName(branch))
      refuse("branch", `"${branch}" is not a safe branch name`);
    let p = this.branchOk.get(branch);
    if (!p) {
      p = runGit(this.config.path, ["check-ref-format", "--branch", branch]).then(
        () => undefined,
        (e) => {
          this.branchOk.delete(branch);
          if (e instanceof GitError)
            refuse("branch", `"${branch}" is rejected by git check-ref-format`);
          throw e;
        },
      );
      this.branchOk.set(branch, p);
    }
    await p;
  }

  /** The commit a branch points at, or null when the branch does not exist. */
  async head(branch: string): Promise<string | null> {
    await this.layout();
    const o = await this.catFile.read(`refs/heads/${branch}`);
    if (!o) return null;
    if (o.type !== "commit")
      throw new IdemError("TARGET_CONFLICT", `refs/heads/${branch} is not a commit`);
    return o.oid;
  }

  /** True when the repo has no branch at all (a fresh `git init`): only then may idem create one. */
  async isEmpty(): Promise<boolean> {
    const out = await runGit(this.config.path, [
      "for-each-ref",
      "--count=1",
      "--format=%(refname)",
      "refs/heads/",
    ]);
    return out.stdout.length === 0;
  }

  /** `ancestor` is reachable from `descendant` (or equal). */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    if (ancestor === descendant) return true;
    const r = await runGit(
      this.config.path,
      ["merge-base", "--is-ancestor", ancestor, descendant],
      { okCodes: [1, 128] },
    );
    return r.code === 0;
  }

  /** Reads a commit object. */
  async commit(
    oid: string,
  ): Promise<{ tree: string; parents: string[]; message: string } | undefined> {
    const o = await this.catFile.read(oid);
    if (o?.type !== "commit") return undefined;
    return parseCommit(o.content);
  }

  async tree(oid: string): Promise<TreeEntry[]> {
    const cached = this.treeCache.get(oid);
    if (cached) return cached;
    const { format } = await this.layout();
    const o = await this.catFile.read(oid);
    if (o?.type !== "tree")
      throw new IdemError("INTEGRITY", `tree ${oid} is missing from repo "${this.alias}"`);
    const entries = parseTree(o.content, format);
    if (this.treeCache.size > 5000) this.treeCache.clear();
    this.treeCache.set(oid, entries);
    return entries;
  }

  /** The tree entry at `path` in `tree`, if any. */
  async entryAt(tree: string | null, path: string): Promise<TreeEntry | undefined> {
    let cur: string | null = tree;
    const parts = path.split("/");
    for (let i = 0; i < parts.length; i++) {
      if (cur === null) return undefined;
      const e = (await this.tree(cur)).find((x) => x.name === parts[i]);
      if (!e) return undefined;
      if (i === parts.length - 1) return e;
      if (e.mode !== "40000") return undefined;
      cur = e.oid;
    }
    return undefined;
  }

  /**
   * Refuses paths that pass through a symlink, file or submodule of `tree` (git would write beyond a
   * symbolic link in a working tree).
   * @throws IdemError SANDBOX_VIOLATION
   */
  async checkTreePaths(tree: string | null, paths: string[]): Promise<void> {
    for (const p of paths) {
      const parts = p.split("/");
      for (let i = 1; i < parts.length; i++) {
        const e = await this.entryAt(tree, parts.slice(0, i).join("/"));
        if (!e) break;
        if (e.mode !== "40000") {
          refuse(
            "path",
            `"${p}" passes through ${parts.slice(0, i).join("/")}, which is a ${e.mode === "120000" ? "symlink" : e.mode === "160000" ? "submodule" : "file"}`,
          );
        }
      }
    }
  }

  async writeObject(type: string, body: Uint8Array): Promise<string> {
    const { gitDir, format } = await this.layout();
    return writeLooseObject(join(gitDir, "objects"), format, type, body, this.options.durable);
  }

  /** Writes the effect's commit object (author and committer from config, the trailer last). */
  async writeCommit(
    tree: string,
    parent: string | null,
    message: string,
    key: string,
  ): Promise<string> {
    const { name, email } = this.config.author;
    if (/[<>\n\0]/.test(name + email))
      refuse("author", "of the repo config may not contain <, >, NUL or a line break");
    const body = serializeCommit(
      tree,
      parent ? [parent] : [],
      { name, email, at: this.options.clock.now() },
      messageWithTrailer(message, key),
    );
    return this.writeObject("commit", body);
  }

  /**
   * Effect keys carried by commits in a range (git log arguments such as `base..head` or `head`),
   * newest first. Linear in the range: callers bound it.
   */
  async scanRange(range: string[]): Promise<Map<string, string[]>> {
    const out = await runGit(this.config.path, [
      "log",
      "--format=%H%x00%B%x00",
      `--grep=^${EFFECT_TRAILER}:`,
      ...range,
      "--",
    ]);
    const keys = new Map<string, string[]>();
    const parts = out.stdout.toString("utf8").split("\0");
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const sha = (parts[i] as string).trim();
      for (const k of trailerKeys(parts[i + 1] as string)) {
        const list = keys.get(k);
        if (list) list.push(sha);
        else keys.set(k, [sha]);
      }
    }
    return keys;
  }

  /**
   * Where `key` stands on `branch`, cheaply in history length. The key's ref is trusted without an
   * ancestry walk when the branch watermark is reachable from the branch (every key ref of the
   * branch points at or below its watermark, see `catchUpLines`); otherwise (the branch was reset or
   * rewritten below the watermark) the ref counts only if its commit is reachable from the branch.
   * A key without a trusted ref is looked for by a scan bounded by the hint's base, or by the
   * watermark; only a repo without idem's refs (a clone, a restore from backup) pays one full scan,
   * cached for this process.
   */
  async lookupKey(branch: string, key: string, hintBase?: string | null): Promise<KeyLookup> {
    const head = await this.head(branch);
    if (head === null) return { found: false, head: null };
    const [ref, wm] = await Promise.all([
      this.catFile.resolve(keyRef(branch, key)),
      this.catFile.resolve(watermarkRef(branch)),
    ]);
    const wmOnBranch = wm !== undefined && (await this.reachable(wm, head));
    if (ref && (wmOnBranch || (await this.isAncestor(ref, head))))
      return { found: true, commit: ref };
    let from: string | undefined;
    if (
      hintBase &&
      (await this.catFile.resolve(hintBase)) &&
      (await this.isAncestor(hintBase, head))
    ) {
      from = hintBase;
    } else if (wmOnBranch) from = wm;
    if (from !== undefined) {
      if (from === head) return { found: false, head };
      const found = (await this.scanRange([`${from}..${head}`])).get(key);
      return found?.[0] ? { found: true, commit: found[0] } : { found: false, head };
    }
    const all = await this.fullScan(branch, head);
    const c = all.get(key);
    return c ? { found: true, commit: c } : { found: false, head };
  }

  private lastReachable: { from: string; to: string; yes: boolean } | undefined;

  /** `isAncestor`, remembering the last answer (a watermark asked about the same head). */
  async reachable(from: string, to: string): Promise<boolean> {
    if (from === to) return true;
    const last = this.lastReachable;
    if (last && last.from === from && last.to === to) return last.yes;
    const yes = await this.isAncestor(from, to);
    this.lastReachable = { from, to, yes };
    return yes;
  }

  /**
   * Many keys on one branch at once (replay): with the watermark on the branch, each key's ref
   * plus one scan of `watermark..head`; otherwise one full scan of the branch.
   */
  async lookupKeys(branch: string, head: string, keys: string[]): Promise<Map<string, string>> {
    const wm = await this.catFile.resolve(watermarkRef(branch));
    if (wm === undefined || !(await this.reachable(wm, head))) return this.fullScan(branch, head);
    const out = new Map<string, string>();
    const recent =
      wm === head ? new Map<string, string[]>() : await this.scanRange([`${wm}..${head}`]);
    for (const k of keys) {
      const c = recent.get(k)?.[0] ?? (await this.catFile.resolve(keyRef(branch, k)));
      if (c) out.set(k, c);
    }
    return out;
  }

  /** Every key reachable from `head`, cached per branch and extended incrementally. */
  async fullScan(branch: string, head: string): Promise<Map<string, string>> {
    const cached = this.scanCache.get(branch);
    let keys: Map<string, string>;
    let range: string[];
    if (cached && (await this.isAncestor(cached.head, head))) {
      if (cached.head === head) return cached.keys;
      keys = new Map(cached.keys);
      range = [`${cached.head}..${head}`];
    } else {
      keys = new Map();
      range = [head];
    }
    for (const [k, shas] of await this.scanRange(range))
      if (!keys.has(k)) keys.set(k, shas[0] as string);
    this.scanCache.set(branch, { head, keys });
    return keys;
  }

  /**
   * The ref updates that keep the branch's key index true when the branch moves from `base` to
   * `commit` (whose own key ref the caller sets). The watermark `w` of a branch keeps two promises:
   * every commit carrying a key at or below `w` has its key ref, and every key ref of the branch
   * points at or below `w`. Usually `w` is `base` and only moves. When it is not below `base` (a
   * human reset or rewrote the branch, or the refs are missing), the branch is scanned once and the
   * key refs of commits no longer on it are deleted in the same transaction.
   */
  async catchUpLines(
    branch: string,
    base: string | null,
    commit: string,
    key: string,
  ): Promise<string[]> {
    const { format } = await this.layout();
    const w = watermarkRef(branch);
    const wm = await this.catFile.resolve(w);
    const moveW = `update ${w} ${commit} ${wm ?? ZERO(format)}`;
    if (base !== null && wm === base) return [moveW];
    const lines: string[] = [];
    if (base !== null && wm && (await this.isAncestor(wm, base))) {
      for (const [k, shas] of await this.scanRange([`${wm}..${base}`])) {
        if (k === key) continue;
        if ((await this.catFile.resolve(keyRef(branch, k))) !== shas[0])
          lines.push(`update ${keyRef(branch, k)} ${shas[0]}`);
      }
      return [...lines, moveW];
    }
    const onBranch = new Map(base === null ? [] : await this.fullScan(branch, base));
    const existing = new Map<string, string>();
    const prefix = `${keyPrefix(branch)}/`;
    const listed = await runGit(this.config.path, [
      "for-each-ref",
      "--format=%(objectname) %(refname)",
      prefix,
    ]);
    for (const line of listed.stdout.toString("utf8").split("\n")) {
      const sp = line.indexOf(" ");
      if (sp > 0) existing.set(line.slice(sp + 1), line.slice(0, sp));
    }
    existing.delete(keyRef(branch, key));
    onBranch.delete(key);
    for (const [k, sha] of onBranch) {
      if (existing.get(keyRef(branch, k)) !== sha) lines.push(`update ${keyRef(branch, k)} ${sha}`);
    }
    const kept = new Set([...onBranch.keys()].map((k) => keyRef(branch, k)));
    for (const [ref, sha] of existing) {
      if (!kept.has(ref)) lines.push(`delete ${ref} ${sha}`);
    }
    return [...lines, moveW];
  }

  /**
   * Moves refs in one transaction (`start` ... `prepare`, `commit` on the long-lived
   * `git update-ref --stdin` that holds the repo lock), compare-and-swap on the old values given.
   * @throws IdemError TARGET_MOVED when a ref is not where the transaction expects it; LOCKED when a
   * git lock file is held by another process.
   */
  async updateRefs(lines: string[]): Promise<void> {
    try {
      const fd = this.lock?.fd;
      if (fd === undefined) {
        const pre = this.options.durable
          ? ["-c", "core.fsync=reference", "-c", "core.fsyncMethod=fsync"]
          : [];
        await runGit(this.config.path, [...pre, "update-ref", "--stdin"], {
          input: `${lines.join("\n")}\n`,
        });
        return;
      }
      this.updater ??= new RefUpdater(this.config.path, fd, this.options.durable);
      await this.updater.run(lines);
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      const err = e.result.stderr;
      if (/File exists|Unable to create .*\.lock/i.test(err)) {
        throw new IdemError(
          "LOCKED",
          `repo "${this.alias}": a git lock file is held: ${err.trim()}`,
          { cause: e },
        );
      }
      if (
        /is at .* but expected|reference already exists|unable to resolve reference|cannot lock ref/i.test(
          err,
        )
      ) {
        throw new IdemError(
          "TARGET_MOVED",
          `repo "${this.alias}": the branch moved: ${err.trim()}`,
          { cause: e },
        );
      }
      throw new IdemError("IO", `repo "${this.alias}": update-ref failed: ${err.trim()}`, {
        cause: e,
      });
    }
  }

  /** git under idem's repo lock: the child inherits the lock (see RunGitOptions.lockFd). */
  lockedGit(args: readonly string[], options: RunGitOptions = {}) {
    return runGit(this.config.path, args, { ...options, lockFd: this.lock?.fd });
  }

  /** The branch checked out in the main working tree, or null (bare repo or detached HEAD). */
  async checkedOutBranch(): Promise<string | null> {
    const { gitDir, bare } = await this.layout();
    if (bare) return null;
    // Unreadable HEAD must not pass for "nothing checked out": the branch would move under a
    // working tree left behind.
    const head = await fs.readFile(join(gitDir, "HEAD"), "utf8");
    const m = /^ref: refs\/heads\/(.+)\n?$/.exec(head);
    return m ? (m[1] as string) : null;
  }

  /**
   * Refuses before anything moves when the human's working tree would be swept in or overwritten:
   * any staged change, an unstaged change to one of `paths`, an untracked file where the effect
   * creates one, or a path through a symlink in the working tree.
   * @throws IdemError DIRTY_WORKTREE; SANDBOX_VIOLATION for a symlink on the way.
   */
  async checkWorktree(paths: string[], baseTree: string | null): Promise<void> {
    const { workTree } = await this.layout();
    if (!workTree) return;
    // --no-optional-locks: a check must not take (and, killed, leave) the index lock git status
    // otherwise takes to refresh the index.
    const st = await runGit(workTree, [
      "--no-optional-locks",
      "status",
      "--porcelain=v1",
      "-z",
      "--untracked-files=no",
      "--no-renames",
    ]);
    const wanted = new Set(paths);
    const entries = st.stdout.toString("utf8").split("\0").filter(Boolean);
    for (const e of entries) {
      const x = e[0];
      const y = e[1];
      const p = e.slice(3);
      if (x !== " " && x !== "?" && x !== "!") {
        throw new IdemError(
          "DIRTY_WORKTREE",
          `repo "${this.alias}" has staged changes (${p}); commit or unstage them first`,
          {
            details: { path: p },
          },
        );
      }
      if (y !== " " && wanted.has(p)) {
        throw new IdemError(
          "DIRTY_WORKTREE",
          `repo "${this.alias}": ${p} has uncommitted changes the effect would overwrite`,
          {
            details: { path: p },
          },
        );
      }
    }
    for (const p of paths) {
      const parts = p.split("/");
      for (let i = 1; i <= parts.length; i++) {
        const sub = parts.slice(0, i).join("/");
        const st2 = await fs.lstat(join(workTree, sub)).catch((e: NodeJS.ErrnoException) => {
          // Absent from here on: nothing to pass through. Any other error must not skip the check.
          if (e.code === "ENOENT" || e.code === "ENOTDIR") return undefined;
          throw e;
        });
        if (!st2) break;
        if (st2.isSymbolicLink() && i < parts.length) {
          refuse("path", `"${p}" passes through the symlink ${sub} in the working tree`);
        }
        if (i === parts.length && !(await this.entryAt(baseTree, p))) {
          throw new IdemError(
            "DIRTY_WORKTREE",
            `repo "${this.alias}": untracked ${p} is in the way`,
            { details: { path: p } },
          );
        }
      }
    }
  }

  private markerPath(gitDir: string): string {
    return join(gitDir, "idem", "pending.json");
  }

  /**
   * Writes the marker whole or not at all: a kill mid-write leaves the previous one, or none. One
   * writer at a time (the repo lock is held), so one temporary name will do.
   */
  private writeMarker(gitDir: string, marker: PendingMarker): void {
    const path = this.markerPath(gitDir);
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, JSON.stringify(marker));
    renameSync(tmp, path);
  }

  /**
   * Runs under idem's repo lock, before each apply: finishes what a killed idem left. Its git
   * children held the lock too (they inherit it), so none of them is still running: the git lock
   * files its interrupted transaction or sync held are removed, temporary working tree files are
   * removed, and the index and working tree are brought forward to the commit idem made when every
   * touched path still holds the old or the new version.
   */
  async recover(): Promise<void> {
    const { gitDir, workTree } = await this.layout();
    rmSync(join(gitDir, "idem", "apply.index.lock"), { force: true });
    const markerPath = this.markerPath(gitDir);
    let text: string;
    try {
      text = readFileSync(markerPath, "utf8");
    } catch (e) {
      // No marker: the last holder finished. Any other error (permissions, I/O) must be seen.
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
      throw e;
    }
    let marker: PendingMarker;
    try {
      marker = JSON.parse(text) as PendingMarker;
    } catch (e) {
      // Written whole by rename, so this is not a torn write: the repo needs a human's look.
      throw new IdemError(
        "INTEGRITY",
        `${markerPath} (what an idem that was killed mid-apply left to finish) is not JSON; inspect the repo and remove the file`,
        { cause: e, details: { path: markerPath } },
      );
    }
    for (const r of marker.refs) {
      if (r.startsWith("refs/")) await fs.rm(join(gitDir, `${r}.lock`), { force: true });
    }
    await fs.rm(join(gitDir, "packed-refs.lock"), { force: true });
    // Moving the checked-out branch also locks HEAD (for its reflog).
    await fs.rm(join(gitDir, "HEAD.lock"), { force: true });
    if (marker.sync) {
      await fs.rm(join(gitDir, "index.lock"), { force: true });
      if (workTree && marker.nonce && Array.isArray(marker.paths)) {
        for (const p of marker.paths) {
          if (typeof p !== "string" || unsafeRelativePath(p)) continue;
          await fs.rm(tempName(join(workTree, p), marker.nonce), { force: true }).catch(() => {});
        }
      }
      const head = await this.head(marker.branch);
      if (head === marker.commit && (await this.checkedOutBranch()) === marker.branch) {
        let done = false;
        const paths = Array.isArray(marker.paths) ? marker.paths : undefined;
        if (
          marker.base !== null &&
          paths?.every((p) => typeof p === "string" && !unsafeRelativePath(p))
        ) {
          const baseTree = (await this.commit(marker.base))?.tree;
          const newTree = (await this.commit(marker.commit))?.tree;
          if (baseTree && newTree) {
            const r = await this.worktree
              .prepare(baseTree, newTree, paths, true)
              .catch(() => undefined);
            if (r?.kind === "done") done = true;
            if (r?.kind === "ready") {
              await r.sync.commit(marker.nonce ?? "recover").then(
                () => {
                  done = true;
                },
                () => {},
              );
            }
          }
        }
        if (!done) {
          const matchesBase =
            marker.base === null
              ? true
              : (
                  await this.lockedGit(["diff-index", "--cached", "--quiet", marker.base, "--"], {
                    okCodes: [1],
                  })
                ).code === 0;
          if (matchesBase) await this.syncWorktree(marker.base, marker.commit).catch(() => {});
        }
      }
    }
    await fs.rm(this.markerPath(gitDir), { force: true });
  }

  /** Two-way merge of the index and working tree from `from` to `to`, as `git checkout` does. */
  async syncWorktree(from: string | null, to: string): Promise<void> {
    const args =
      from === null ? ["read-tree", "-m", "-u", to] : ["read-tree", "-m", "-u", from, to];
    await this.lockedGit(args);
  }

  /**
   * Makes `commit` (whose parent is `base`) the branch head with compare-and-swap from `base`, and
   * indexes `key` in the same transaction. A checked-out branch (`sync`) has its index and working
   * tree brought along for `paths` (every path the commit changes): checked first and written in
   * process when it can (WorktreeSync), else checked with `git status` and moved with
   * `read-tree -m -u`; if git then refuses, the branch is moved back and DIRTY_WORKTREE thrown.
   * @throws IdemError DIRTY_WORKTREE with nothing moved; TARGET_MOVED; LOCKED.
   */
  async publish(
    branch: string,
    base: string | null,
    commit: string,
    key: string,
    sync: boolean,
    paths: string[],
  ): Promise<void> {
    const { gitDir } = await this.layout();
    const branchRef = `refs/heads/${branch}`;
    const lines = [
      base === null ? `create ${branchRef} ${commit}` : `update ${branchRef} ${commit} ${base}`,
      `update ${keyRef(branch, key)} ${commit}`,
      ...(await this.catchUpLines(branch, base, commit, key)),
    ];
    const refs = lines.map((l) => l.split(" ")[1] as string);
    const nonce = randomBytes(6).toString("hex");
    const marker: PendingMarker = { branch, base, commit, refs, sync, paths, nonce };
    mkdirSync(join(gitDir, "idem"), { recursive: true });
    let fast: PreparedSync | undefined;
    if (sync && base !== null) {
      const baseTree = (await this.commit(base))?.tree;
      const newTree = (await this.commit(commit))?.tree;
      if (baseTree && newTree) {
        // Written before git's index.lock is taken, so the next holder can clean up after a crash.
        this.writeMarker(gitDir, marker);
        try {
          const r = await this.worktree.prepare(baseTree, newTree, paths, false);
          if (r.kind === "ready") fast = r.sync;
        } catch (e) {
          await fs.rm(this.markerPath(gitDir), { force: true });
          throw e;
        }
      }
    }
    if (sync && !fast)
      await this.checkWorktree(
        paths,
        base === null ? null : ((await this.commit(base))?.tree ?? null),
      );
    this.writeMarker(gitDir, marker);
    try {
      await this.updateRefs(lines);
    } catch (e) {
      await fast?.abort();
      await fs.rm(this.markerPath(gitDir), { force: true });
      throw e;
    }
    if (fast) {
      // The effect is committed: a failure here is finished by the next holder's recover().
      await fast.commit(nonce);
      rmSync(this.markerPath(gitDir), { force: true });
      return;
    } else if (sync) {
      try {
        await this.syncWorktree(base, commit);
      } catch (e) {
        if (!(e instanceof GitError)) throw e;
        // Every key ref of the branch is at or below `base`: the watermark may go back there.
        await this.updateRefs([
          base === null ? `delete ${branchRef} ${commit}` : `update ${branchRef} ${base} ${commit}`,
          `delete ${keyRef(branch, key)} ${commit}`,
          base === null
            ? `delete ${watermarkRef(branch)} ${commit}`
            : `update ${watermarkRef(branch)} ${base} ${commit}`,
        ]).catch(() => {});
        await fs.rm(this.markerPath(gitDir), { force: true });
        const stderr = e.result.stderr.trim();
        // Another git command (a human's, or one a killed idem left running) holds the index: a
        // wait, not a conflict a human must resolve.
        if (/index\.lock': File exists|Unable to create .*index\.lock/i.test(stderr)) {
          throw new IdemError(
            "LOCKED",
            `repo "${this.alias}": the index is locked by another git command, nothing was changed: ${stderr}`,
            { cause: e },
          );
        }
        throw new IdemError(
          "DIRTY_WORKTREE",
          `repo "${this.alias}": the working tree could not follow the commit, nothing was changed: ${stderr}`,
          { cause: e },
        );
      }
    }
    await fs.rm(this.markerPath(gitDir), { force: true });
  }

  /**
   * Runs `fn` holding idem's lock on this repository (between processes and inside this one), after
   * recovering whatever a killed holder left behind.
   * @throws IdemError LOCKED when another process holds it too long.
   */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    await this.layout();
    const lock = this.lock as FileLock;
    const release = await lock.acquire();
    try {
      await this.recover();
      return await fn();
    } finally {
      await release();
    }
  }

  /** A fresh temporary index file path in this process's scratch folder. */
  async tempIndex(tag: string): Promise<string> {
    return join(
      await this.options.tmpDir(),
      `${refComponent(this.alias)}-${tag}-${randomBytes(4).toString("hex")}.index`,
    );
  }

  /** The index file apply uses (shared between idem processes under the repo lock). */
  async applyIndex(): Promise<string> {
    const { gitDir } = await this.layout();
    return join(gitDir, "idem", "apply.index");
  }

  close(): void {
    this.catFile.close();
    this.updater?.close();
    this.updater = undefined;
    void this.lock?.close();
  }
}
