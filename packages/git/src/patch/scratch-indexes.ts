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
import type { GitRepo } from "../git-repo.js";
import { findEntry, parseIndex } from "../plumbing/git-index.js";
import { Mutex } from "../plumbing/mutex.js";
import { runGit } from "../plumbing/run-git.js";
import { type FileChange, treeWith } from "../plumbing/tree-writer.js";
import { changedOutside, strayPathError } from "./patch-scope.js";

interface IndexState {
  tree: string | null;
  stamp: string;
}

/** A patch to apply to a tree: the base tree (null: none), the patch, and every path it touches. */
export interface PatchChange {
  baseTree: string | null;
  patch: string;
  paths: string[];
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
   * @throws IdemError INVALID_INPUT when git changes a path that is not among `paths`.
   */
  async tryApply(
    repo: GitRepo,
    file: string,
    change: PatchChange,
  ): Promise<{ ok: boolean; reason: string }> {
    const { baseTree: tree, patch, paths } = change;
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
    const before = parseIndex(readFileSync(out), format);
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
    if (parsed.ok && before.ok) {
      const stray = changedOutside(before.index.entries, parsed.index.entries, new Set(paths));
      if (stray !== undefined) throw strayPathError(stray);
    }
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
    const after = await treeWith(repo.objects, tree, changes);
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
