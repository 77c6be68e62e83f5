import { closeSync, fdatasync as fdatasyncCb, promises as fs, openSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { IdemError } from "@idem/schema";
import { CatFileProcess } from "./cat-file-process.js";
import {
  type CommitInfo,
  type ObjectFormat,
  objectId,
  parseCommit,
  parseTree,
  serializeSortedTree,
  sortTree,
  type TreeEntry,
  writeLooseObject,
} from "./git-objects.js";
import { PackRollup } from "./pack-rollup.js";
import { type PackObject, writePack } from "./pack-writer.js";
import { RefFiles } from "./ref-files.js";
import type { InProcessRefs } from "./ref-transaction.js";
import { runGit } from "./run-git.js";

const fdatasync = promisify(fdatasyncCb);

/** Objects are immutable: each cache is cleared whole when it grows past this many entries. */
const CACHE_ENTRIES = 5000;
/** Blobs idem wrote stay readable in process (the working tree sync writes them next) up to this. */
const BLOB_CACHE_BYTES = 8 << 20;
const BLOB_CACHE_ONE = 256 << 10;

/** What a tree is built with: objects read, and written through the repository or a batch. */
export interface ObjectWriter {
  /** A tree's entries. @throws IdemError INTEGRITY when the tree is missing. */
  tree(oid: string): Promise<TreeEntry[]>;
  /** Writes an object and returns its id. */
  writeObject(type: string, body: Uint8Array): Promise<string>;
  /** Writes a tree object of `entries` (in any order) and returns its id. */
  writeTree(entries: TreeEntry[]): Promise<string>;
}

/** Writes held for one pack (`RepoObjects.packBatch`). */
export interface PackBatch extends ObjectWriter {
  /** Writes what the batch holds as one pack (not fsynced: see `syncObjects`). */
  flush(): Promise<void>;
}

/** Where a repository keeps its objects and refs, and whether it has a working tree. */
export interface RepoLayout {
  gitDir: string;
  bare: boolean;
  format: ObjectFormat;
  workTree: string | null;
}

/**
 * One repository's object database read and written in process: its layout, refs read from their
 * files (`RefFiles`, git's `cat-file` where those cannot answer), a long-lived `git cat-file
 * --batch` for objects, caches of the commits and trees read or written (immutable, by oid) and of
 * the blobs just written, and loose objects written from Node. No lock and no ref moves: those
 * belong to the repository object above it.
 */
export class RepoObjects {
  readonly catFile: CatFileProcess;
  private info: Promise<RepoLayout> | undefined;
  private refFiles: RefFiles | undefined;
  private readonly treeCache = new Map<string, TreeEntry[]>();
  private readonly commitCache = new Map<string, CommitInfo>();
  private readonly blobCache = new Map<string, Buffer>();
  private blobBytes = 0;
  /** Durable repositories: loose objects written and not fsynced yet (see `syncObjects`). */
  private readonly unsynced = new Set<string>();
  /** Objects a `packBatch()` holds in memory until its flush writes them as one pack. */
  private readonly held = new Map<string, PackObject>();
  /** The packs batches write, rolled up now and then. */
  readonly rollup: PackRollup;

  constructor(
    readonly alias: string,
    readonly path: string,
    private readonly durable: boolean,
  ) {
    this.catFile = new CatFileProcess(path);
    this.rollup = new PackRollup(path);
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
      // One process: --show-toplevel would fail in a bare repository, so the working tree is told
      // by --is-inside-work-tree and --show-prefix (empty at its top).
      out = (
        await runGit(real, [
          "rev-parse",
          "--absolute-git-dir",
          "--is-bare-repository",
          "--show-object-format",
          "--is-inside-work-tree",
          "--show-prefix",
        ])
      ).stdout.toString();
    } catch (e) {
      throw new IdemError(
        "TARGET_MISSING",
        `repo "${this.alias}": ${path} is not a git repository`,
        { cause: e },
      );
    }
    const [gitDir, bareText, formatText, insideText, prefix] = out.split("\n");
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
      if (insideText !== "true" || (prefix ?? "") !== "") {
        throw new IdemError(
          "TARGET_MISSING",
          `repo "${this.alias}": ${path} is inside a repository, not its top`,
        );
      }
      workTree = real;
    }
    const format: ObjectFormat = formatText === "sha256" ? "sha256" : "sha1";
    this.refFiles = new RefFiles(gitDir as string, format === "sha1" ? 40 : 64);
    return { gitDir: gitDir as string, bare, format, workTree };
  }

  /** What `moveRefsInProcess` needs of this repository (its refs read as files). */
  async inProcessRefs(): Promise<InProcessRefs | undefined> {
    const { gitDir, format } = await this.layout();
    if (!this.refFiles) return undefined;
    const hexLength = format === "sha1" ? 40 : 64;
    return { alias: this.alias, gitDir, refs: this.refFiles, hexLength, durable: this.durable };
  }

  /**
   * The oid a full ref name (`refs/...`) points at, read fresh on every call, or undefined when the
   * ref does not exist.
   */
  async ref(refname: string): Promise<string | undefined> {
    await this.layout();
    const fromFiles = this.refFiles?.read(refname);
    if (fromFiles !== undefined) return fromFiles ?? undefined;
    return this.catFile.resolve(refname);
  }

  /**
   * The commit a branch points at, or null when the branch does not exist.
   * @throws IdemError TARGET_CONFLICT when the ref holds something else than a commit; INTEGRITY
   * when its commit is missing from the object database.
   */
  async head(branch: string): Promise<string | null> {
    const refname = `refs/heads/${branch}`;
    const oid = await this.ref(refname);
    if (oid === undefined) return null;
    if (this.commitCache.has(oid)) return oid;
    const o = await this.catFile.read(oid);
    if (!o) {
      throw new IdemError(
        "INTEGRITY",
        `repo "${this.alias}": ${refname} points at ${oid}, which is missing from the repository`,
      );
    }
    if (o.type !== "commit") throw new IdemError("TARGET_CONFLICT", `${refname} is not a commit`);
    this.remember(this.commitCache, oid, parseCommit(o.content));
    return oid;
  }

  /** Reads a commit object (cached); undefined when `oid` is not a commit. */
  async commit(oid: string): Promise<CommitInfo | undefined> {
    const cached = this.commitCache.get(oid);
    if (cached) return cached;
    const held = this.held.get(oid);
    if (held) return held.type === "commit" ? parseCommit(Buffer.from(held.body)) : undefined;
    const o = await this.catFile.read(oid);
    if (o?.type !== "commit") return undefined;
    const info = parseCommit(o.content);
    this.remember(this.commitCache, oid, info);
    return info;
  }

  /** A blob's bytes (in process when idem just wrote it); undefined when `oid` is not a blob. */
  async blob(oid: string): Promise<Buffer | undefined> {
    const cached = this.blobCache.get(oid);
    if (cached) return cached;
    const held = this.held.get(oid);
    if (held) return held.type === "blob" ? Buffer.from(held.body) : undefined;
    const o = await this.catFile.read(oid);
    return o?.type === "blob" ? o.content : undefined;
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
    const held = this.held.get(oid);
    if (held?.type === "tree") return parseTree(Buffer.from(held.body), format);
    const o = await this.catFile.read(oid);
    if (o?.type !== "tree")
      throw new IdemError("INTEGRITY", `tree ${oid} is missing from repo "${this.alias}"`);
    const entries = parseTree(o.content, format);
    this.remember(this.treeCache, oid, entries);
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
   * Writes a loose object and returns its id. In a durable repository the object is fsynced by the
   * next `syncObjects()`, together with the others written since (the caller calls it before any
   * ref points at them). What it wrote is remembered: a commit or tree is then read without git,
   * and so is a small blob until later blobs push it out.
   */
  async writeObject(type: string, body: Uint8Array): Promise<string> {
    const { format } = await this.layout();
    return this.write(type, body, () => parseTree(Buffer.from(body), format));
  }

  /** Writes a tree object of `entries` (in any order) as `writeObject` does, and returns its id. */
  async writeTree(entries: TreeEntry[]): Promise<string> {
    const sorted = sortTree(entries);
    return this.write("tree", serializeSortedTree(sorted), () => sorted);
  }

  private async write(
    type: string,
    body: Uint8Array,
    tree: () => TreeEntry[],
    batch?: Set<string>,
  ): Promise<string> {
    const { gitDir, format } = await this.layout();
    const objectsDir = join(gitDir, "objects");
    let oid: string;
    if (batch && this.durable) {
      oid = objectId(format, type, body);
      this.held.set(oid, { oid, type, body: Buffer.from(body) });
      batch.add(oid);
    } else {
      oid = await writeLooseObject({ objectsDir, format, type, body, durable: false });
      if (this.durable) this.unsynced.add(join(objectsDir, oid.slice(0, 2), oid.slice(2)));
    }
    if (type === "commit") this.remember(this.commitCache, oid, parseCommit(Buffer.from(body)));
    else if (type === "tree") this.remember(this.treeCache, oid, tree());
    else if (type === "blob" && body.length <= BLOB_CACHE_ONE && !this.blobCache.has(oid)) {
      this.blobCache.set(oid, Buffer.from(body));
      this.blobBytes += body.length;
      for (const [k, v] of this.blobCache) {
        if (this.blobBytes <= BLOB_CACHE_BYTES) break;
        this.blobCache.delete(k);
        this.blobBytes -= v.length;
      }
    }
    return oid;
  }

  /**
   * A batch of writes (`PackBatch`): in a durable repository the objects written through it are
   * held in memory (read back in process like any other) until its `flush()` writes them all as
   * one pack, two files where loose objects make one each, fsynced by the next `syncObjects()`. In
   * a repository that is not durable its writes are loose objects as usual (those are checked whole
   * before reuse, issue 51).
   */
  packBatch(): PackBatch {
    const mine = new Set<string>();
    return {
      tree: (oid) => this.tree(oid),
      writeObject: async (type, body) => {
        const { format } = await this.layout();
        return this.write(type, body, () => parseTree(Buffer.from(body), format), mine);
      },
      writeTree: (entries) => {
        const sorted = sortTree(entries);
        return this.write("tree", serializeSortedTree(sorted), () => sorted, mine);
      },
      flush: () => this.writeHeld(mine),
    };
  }

  /** The objects `batch` holds, as one pack to be fsynced by `syncObjects`; none, nothing written. */
  private async writeHeld(batch: Set<string>): Promise<void> {
    if (batch.size === 0) return;
    const { gitDir, format } = await this.layout();
    const objects = [...batch].flatMap((oid) => this.held.get(oid) ?? []);
    let files: { pack: string; idx: string };
    try {
      files = writePack(join(gitDir, "objects"), format, objects);
    } finally {
      // Written or not, they are the batch's alone: a batch whose pack failed fails whole.
      for (const oid of batch) this.held.delete(oid);
      batch.clear();
    }
    this.unsynced.add(files.pack);
    this.unsynced.add(files.idx);
    this.rollup.wrote();
  }

  /**
   * Durable repositories: fsyncs (fdatasync) every loose object and batch pack (with its index)
   * written since the last call, all at once, so the file system can make them durable in one
   * journal commit instead of one each. A file gone since (pruned, or a pack git's roll-up replaced
   * with its own fsynced one) is skipped. Nothing to do when the repository is not durable.
   * @throws the fsync's error (the ref must not move then).
   */
  async syncObjects(): Promise<void> {
    if (this.unsynced.size === 0) return;
    const paths = [...this.unsynced];
    this.unsynced.clear();
    try {
      await Promise.all(paths.map(syncFile));
    } catch (e) {
      for (const p of paths) this.unsynced.add(p);
      throw e;
    }
  }

  private remember<T>(cache: Map<string, T>, oid: string, value: T): void {
    if (cache.size >= CACHE_ENTRIES) cache.clear();
    cache.set(oid, value);
  }

  /** Ends the cat-file process. */
  close(): void {
    this.catFile.close();
  }
}

/**
 * fdatasync of one file; a file that is gone is nothing to sync. Opened and closed synchronously
 * (a few microseconds each): only the fdatasync goes to libuv's thread pool, whose four threads an
 * effect's fsyncs (its objects and its refs' lock files) share.
 */
async function syncFile(path: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    throw e;
  }
  try {
    await fdatasync(fd);
  } finally {
    closeSync(fd);
  }
}
