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

/** A checked sync holding git's index.lock: `commit()` writes the files and the index. */
export class PreparedSync {
  constructor(private readonly parts: PreparedSyncParts) {}

  /** Gives up without changing anything (releases index.lock). */
  abort(): Promise<void> {
    return this.parts.files.release();
  }

  /**
   * Writes the new versions of the touched files and the index. On failure index.lock is released
   * and the index is left as it was; the caller's crash marker lets the next holder finish.
   */
  async commit(nonce: string): Promise<void> {
    try {
      await this.write(nonce);
    } catch (e) {
      await this.parts.files.release();
      throw e;
    }
  }

  private async write(nonce: string): Promise<void> {
    const entries = this.parts.index.entries;
    for (const e of entries) {
      // What git does when it writes an index: an entry not older than the index it read could
      // be racily clean, so it must be compared by content later, never trusted by its stat.
      if ((e.stat[2] as number) >= this.parts.indexMtimeSec) e.stat[9] = 0;
    }
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
    for (const c of this.parts.changes) {
      const pathBytes = Buffer.from(c.path, "utf8");
      const at = findEntry(entries, pathBytes);
      if (!c.next) {
        if (at >= 0) entries.splice(at, 1);
        continue;
      }
      const content = await this.parts.repo.blob(c.next.oid);
      if (content === undefined)
        throw new IdemError(
          "INTEGRITY",
          `blob ${c.next.oid} is missing from repo "${this.parts.repo.alias}"`,
        );
      const file = join(this.parts.workTree, c.path);
      const tmp = tempName(file, nonce);
      mkdirSync(dirname(file), { recursive: true });
      rmSync(tmp, { force: true });
      writeFileSync(tmp, content, {
        flag: "wx",
        mode: c.next.mode === EXEC_MODE ? 0o777 : 0o666,
      });
      renameSync(tmp, file);
      const st = lstatSync(file, { bigint: true });
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
          c.next.mode === EXEC_MODE ? 0o100755 : 0o100644,
          u32(st.uid),
          u32(st.gid),
          0, // smudged: git compares the content once instead of trusting this stat
        ],
        oid: c.next.oid,
        flags: 0,
      };
      const pos = findEntry(entries, pathBytes);
      if (pos >= 0) entries[pos] = entry;
      else entries.splice(-pos - 1, 0, entry);
    }
    if (this.parts.index.tree) updateCacheTree(this.parts.index.tree, this.parts.dirs, entries);
    const data = serializeIndex(this.parts.index, this.parts.format);
    writeSync(this.parts.files.fd, data);
    this.parts.files.close();
    renameSync(this.parts.files.lockPath, this.parts.files.indexPath);
  }
}
