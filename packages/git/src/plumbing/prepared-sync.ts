import { createHash } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { IdemError } from "@idem/schema";
import {
  findEntry,
  type GitIndex,
  type IndexEntry,
  serializeIndex,
  updateCacheTree,
} from "./git-index.js";
import { EXEC_MODE, type ObjectFormat, type TreeEntry } from "./git-objects.js";
import type { RepoObjects } from "./repo-objects.js";

/** One path an effect commit changes: its blob before and after (undefined: absent). */
export interface Change {
  path: string;
  old: TreeEntry | undefined;
  next: TreeEntry | undefined;
}

/**
 * The temporary name idem writes a working tree file under before renaming it into place:
 * `.<name>.idem-<nonce>`, or, when that would pass the 255 bytes a file name may have (a name git
 * takes can be 255 bytes long itself), `.<sha-256 of the name, 16 hex>.idem-<nonce>`: such a name
 * could never be created before, so crash recovery finds either.
 */
export function tempName(path: string, nonce: string): string {
  const name = basename(path);
  const temp = `.${name}.idem-${nonce}`;
  if (Buffer.byteLength(temp) <= 255) return join(dirname(path), temp);
  const short = createHash("sha256").update(name).digest("hex").slice(0, 16);
  return join(dirname(path), `.${short}.idem-${nonce}`);
}

/** What a checked sync holds: the repository, the parsed index, the changes and the lock. */
export interface PreparedSyncParts {
  repo: RepoObjects;
  workTree: string;
  format: ObjectFormat;
  index: GitIndex;
  indexMtimeSec: number;
  changes: Change[];
  /** Every folder the changes touch, with its tree in the new commit (null: not a folder there). */
  dirs: Map<string, string | null>;
  files: {
    /** The open `index.lock` (git's lock, created O_EXCL) and its idempotent close. */
    fd: number;
    close: () => void;
    lockPath: string;
    indexPath: string;
    release: () => Promise<void>;
  };
}

/** A changed file written under its temporary name, to be renamed into place. */
interface Staged {
  tmp: string;
  file: string;
}

/**
 * A checked sync holding git's index.lock: `stage()` writes the new files under temporary names and
 * the new index into index.lock while the branch has not moved yet (the caller's fsyncs run
 * meanwhile), `commit()` then puts them in place; `commit()` alone does both.
 */
export class PreparedSync {
  private staged: Staged[] | undefined;

  constructor(private readonly parts: PreparedSyncParts) {}

  /** Gives up without changing anything (removes what `stage` wrote, releases index.lock). */
  async abort(): Promise<void> {
    for (const s of this.staged ?? []) rmSync(s.tmp, { force: true });
    this.staged = undefined;
    await this.parts.files.release();
  }

  /**
   * Writes what `commit` will put in place, changing nothing git or a human sees: each new file
   * under its temporary name (`tempName`, which recovery removes after a kill) and the new index
   * into index.lock. Does nothing when a changed file's folder does not exist yet (`commit` then
   * writes everything). On failure nothing is staged and index.lock is released.
   */
  async stage(nonce: string): Promise<void> {
    const { changes, workTree } = this.parts;
    if (changes.some((c) => c.next && !isDir(dirname(join(workTree, c.path))))) return;
    await this.stageAll(nonce);
  }

  /** `stage`, every changed file's folder being there. */
  private async stageAll(nonce: string): Promise<void> {
    const { changes, workTree } = this.parts;
    const staged: Staged[] = [];
    try {
      const entries = this.smudgedEntries();
      for (const c of changes) {
        const pathBytes = Buffer.from(c.path, "utf8");
        if (!c.next) {
          const at = findEntry(entries, pathBytes);
          if (at >= 0) entries.splice(at, 1);
          continue;
        }
        const file = join(workTree, c.path);
        const tmp = tempName(file, nonce);
        staged.push({ tmp, file });
        await this.writeTemp(c, tmp);
        // The rename keeps the inode and the mtime; the entry is smudged, so git compares content.
        setEntry(entries, c, pathBytes, tmp);
      }
      this.writeIndex(entries);
    } catch (e) {
      for (const s of staged) rmSync(s.tmp, { force: true });
      await this.parts.files.release();
      throw e;
    }
    this.staged = staged;
  }

  /**
   * Writes the new versions of the touched files and the index (or puts in place what `stage`
   * wrote). On failure index.lock is released and the index is left as it was; the caller's crash
   * marker lets the next holder finish.
   */
  async commit(nonce: string): Promise<void> {
    try {
      let staged = this.staged;
      if (!staged) {
        for (const c of this.parts.changes) {
          if (c.next) mkdirSync(dirname(join(this.parts.workTree, c.path)), { recursive: true });
        }
        await this.stageAll(nonce);
        staged = this.staged as Staged[];
      }
      this.removeDeleted();
      for (const s of staged) renameSync(s.tmp, s.file);
      this.parts.files.close();
      renameSync(this.parts.files.lockPath, this.parts.files.indexPath);
    } catch (e) {
      await this.parts.files.release();
      throw e;
    }
  }

  /** The index's entries, those that could be racily clean smudged as git does when it writes. */
  private smudgedEntries(): IndexEntry[] {
    const entries = this.parts.index.entries;
    for (const e of entries) {
      // An entry not older than the index it read could be racily clean, so it must be compared by
      // content later, never trusted by its stat.
      if ((e.stat[2] as number) >= this.parts.indexMtimeSec) e.stat[9] = 0;
    }
    return entries;
  }

  /** Removes the files the commit deletes, and the folders that leaves empty. */
  private removeDeleted(): void {
    for (const c of this.parts.changes) {
      if (c.next) continue;
      const file = join(this.parts.workTree, c.path);
      rmSync(file, { force: true });
      let dir = dirname(c.path);
      while (dir !== "." && dir !== "") {
        try {
          rmdirSync(join(this.parts.workTree, dir));
        } catch {
          break;
        }
        dir = dirname(dir);
      }
    }
  }

  /** Writes a changed file's new content under `tmp`. @throws IdemError INTEGRITY (blob missing). */
  private async writeTemp(c: Change, tmp: string): Promise<void> {
    const next = c.next as TreeEntry;
    const content = await this.parts.repo.blob(next.oid);
    if (content === undefined)
      throw new IdemError(
        "INTEGRITY",
        `blob ${next.oid} is missing from repo "${this.parts.repo.alias}"`,
      );
    rmSync(tmp, { force: true });
    writeFileSync(tmp, content, { flag: "wx", mode: next.mode === EXEC_MODE ? 0o777 : 0o666 });
  }

  /** The new index, with its cache tree, written into index.lock (not in place yet). */
  private writeIndex(entries: IndexEntry[]): void {
    if (this.parts.index.tree) updateCacheTree(this.parts.index.tree, this.parts.dirs, entries);
    writeSync(this.parts.files.fd, serializeIndex(this.parts.index, this.parts.format));
  }
}

/** The index entry of a changed file, from the stat of `statPath` (the file, or its temporary). */
function setEntry(entries: IndexEntry[], c: Change, pathBytes: Buffer, statPath: string): void {
  const next = c.next as TreeEntry;
  const st = lstatSync(statPath, { bigint: true });
  const u32 = (n: bigint) => Number(n & 0xffffffffn);
  const entry: IndexEntry = {
    path: c.path,
    pathBytes,
    stat: [
      u32(st.ctimeNs / 1_000_000_000n),
      u32(st.ctimeNs % 1_000_000_000n),
      u32(st.mtimeNs / 1_000_000_000n),
      u32(st.mtimeNs % 1_000_000_000n),
      u32(st.dev),
      u32(st.ino),
      next.mode === EXEC_MODE ? 0o100755 : 0o100644,
      u32(st.uid),
      u32(st.gid),
      0, // smudged: git compares the content once instead of trusting this stat
    ],
    oid: next.oid,
    flags: 0,
  };
  const pos = findEntry(entries, pathBytes);
  if (pos >= 0) entries[pos] = entry;
  else entries.splice(-pos - 1, 0, entry);
}

function isDir(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}
