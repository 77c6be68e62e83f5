import { promises as fs } from "node:fs";
import { join } from "node:path";
import { IdemError } from "@idem/schema";
import { CatFileProcess } from "./cat-file-process.js";
import {
  type CommitInfo,
  type ObjectFormat,
  parseCommit,
  parseTree,
  type TreeEntry,
  writeLooseObject,
} from "./git-objects.js";
import { runGit } from "./run-git.js";

/** Where a repository keeps its objects and refs, and whether it has a working tree. */
export interface RepoLayout {
  gitDir: string;
  bare: boolean;
  format: ObjectFormat;
  workTree: string | null;
}

/**
 * One repository's object database read and written in process: its layout, a long-lived
 * `git cat-file --batch` for objects and refs, a tree cache, and loose objects written from Node.
 * No lock and no ref moves: those belong to the repository object above it.
 */
export class RepoObjects {
  readonly catFile: CatFileProcess;
  private info: Promise<RepoLayout> | undefined;
  private readonly treeCache = new Map<string, TreeEntry[]>();

  constructor(
    readonly alias: string,
    readonly path: string,
    private readonly durable: boolean,
  ) {
    this.catFile = new CatFileProcess(path);
  }

  /**
   * Resolves the repository layout once (retried after a failure).
   * @throws IdemError TARGET_MISSING when the path does not exist, is not a repository, or is not
   * the repository's top folder.
   */
  layout(): Promise<RepoLayout> {
    if (!this.info) {
      this.info = this.resolveLayout();
      this.info.catch(() => {
        this.info = undefined;
      });
    }
    return this.info;
  }

  private async resolveLayout(): Promise<RepoLayout> {
    const path = this.path;
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
      const top = (await runGit(real, ["rev-parse", "--show-toplevel"])).stdout.toString().trim();
      if ((await fs.realpath(top)) !== real) {
        throw new IdemError(
          "TARGET_MISSING",
          `repo "${this.alias}": ${path} is inside a repository, not its top`,
        );
      }
      workTree = real;
    }
    const format: ObjectFormat = formatText === "sha256" ? "sha256" : "sha1";
    return { gitDir: gitDir as string, bare, format, workTree };
  }

  /**
   * The commit a branch points at, or null when the branch does not exist.
   * @throws IdemError TARGET_CONFLICT when the ref holds something else than a commit.
   */
  async head(branch: string): Promise<string | null> {
    await this.layout();
    const o = await this.catFile.read(`refs/heads/${branch}`);
    if (!o) return null;
    if (o.type !== "commit")
      throw new IdemError("TARGET_CONFLICT", `refs/heads/${branch} is not a commit`);
    return o.oid;
  }

  /** Reads a commit object; undefined when `oid` is not a commit. */
  async commit(oid: string): Promise<CommitInfo | undefined> {
    const o = await this.catFile.read(oid);
    if (o?.type !== "commit") return undefined;
    return parseCommit(o.content);
  }

  /** The root tree of commit `commit`, or null for none (no commit, or it is unreadable). */
  async treeOf(commit: string | null): Promise<string | null> {
    return commit === null ? null : ((await this.commit(commit))?.tree ?? null);
  }

  /** A tree's entries (cached). @throws IdemError INTEGRITY when the tree is missing. */
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

  /** Writes a loose object (fsynced when the repository is durable) and returns its id. */
  async writeObject(type: string, body: Uint8Array): Promise<string> {
    const { gitDir, format } = await this.layout();
    return writeLooseObject(join(gitDir, "objects"), format, type, body, this.durable);
  }

  /** Ends the cat-file process. */
  close(): void {
    this.catFile.close();
  }
}
