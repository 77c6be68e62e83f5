import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { aliasOf, IdemError, type KindLock, type ProbeResult } from "@idem/kit";
import { FileLock } from "../../file-lock.js";
import { checkKey, checkRelativePath, refuse } from "../../sandbox.js";
import type { FileRoots } from "./file-roots.js";
import { StaleTemps, tempName } from "./file-write-temps.js";
import type { FileWriteSpec } from "./spec.js";

/** The probe and apply of file.write over the configured roots, with their locks: its resource. */
export interface FileWriter {
  probe(spec: FileWriteSpec, key: string): Promise<ProbeResult>;
  apply(spec: FileWriteSpec, key: string, probed?: ProbeResult): Promise<Record<string, unknown>>;
}

/** The bytes a file.write spec asks for. @throws IdemError SANDBOX_VIOLATION */
export function fileWriteBytes(spec: FileWriteSpec, maxFileBytes: number): Buffer {
  checkRelativePath("path", spec.path);
  if (typeof spec.content !== "string") refuse("content", "must be a string");
  let bytes: Buffer;
  if (spec.encoding === "base64") {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(spec.content) || spec.content.length % 4 !== 0)
      refuse("content", "is not valid base64");
    bytes = Buffer.from(spec.content, "base64");
  } else {
    bytes = Buffer.from(spec.content, "utf8");
  }
  if (bytes.length > maxFileBytes)
    refuse("content", `is larger than limits.maxFileBytes (${maxFileBytes})`);
  return bytes;
}

function isErrno(e: unknown, ...codes: string[]): boolean {
  return (
    typeof e === "object" && e !== null && codes.includes((e as NodeJS.ErrnoException).code ?? "")
  );
}

function ioError(e: unknown, what: string): IdemError {
  const code = (e as NodeJS.ErrnoException).code;
  // A name the file system cannot take fails the same way every time: the spec's fault.
  if (code === "ENAMETOOLONG")
    return new IdemError("INVALID_INPUT", `${what}: the name is too long for the file system`, {
      cause: e,
      details: { field: "path" },
    });
  return new IdemError(
    code === "ENOSPC" || code === "EDQUOT" ? "DISK_FULL" : "IO",
    `${what}: ${(e as Error).message}`,
    {
      cause: e,
    },
  );
}

/**
 * A file's version: inode, size and modification time in nanoseconds (every idem write is a rename,
 * so a new inode; an edit in place moves the time), or null when it does not exist.
 */
async function fileVersion(file: string): Promise<string | null> {
  try {
    const st = await fs.stat(file, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch (e) {
    if (isErrno(e, "ENOENT", "ENOTDIR")) return null;
    throw ioError(e, `cannot read ${file}`);
  }
}

/**
 * Resolves `rel` under the root and checks the way there: every existing component is a directory
 * (a symlink is followed only if it stays inside the root), and the file itself is not a symlink.
 * Returns the absolute path (parents may not exist yet) and the root's real path.
 * @throws IdemError SANDBOX_VIOLATION; TARGET_MISSING when the root does not exist.
 */
export async function resolveInRoot(
  rootPath: string,
  alias: string,
  rel: string,
): Promise<{ file: string; root: string }> {
  let root: string;
  try {
    root = await fs.realpath(rootPath);
  } catch (e) {
    throw new IdemError("TARGET_MISSING", `root "${alias}": ${rootPath} does not exist`, {
      cause: e,
    });
  }
  const parts = rel.split("/");
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    const next = join(cur, parts[i] as string);
    let st: import("node:fs").Stats;
    try {
      st = await fs.lstat(next);
    } catch (e) {
      if (isErrno(e, "ENOENT")) return { file: join(cur, ...parts.slice(i)), root };
      throw ioError(e, `cannot inspect ${next}`);
    }
    const last = i === parts.length - 1;
    if (st.isSymbolicLink()) {
      if (last) refuse("path", `"${rel}" is a symlink; idem does not write through symlinks`);
      const real = await fs.realpath(next).catch(() => undefined);
      if (real === undefined || (real !== root && !real.startsWith(root + sep))) {
        refuse("path", `"${rel}" passes through a symlink that leaves the root`);
      }
      if (real.split(sep).some((s) => s.toLowerCase() === ".git"))
        refuse("path", `"${rel}" leads into a .git folder`);
      cur = real;
      continue;
    }
    if (!last && !st.isDirectory())
      refuse("path", `"${rel}": ${parts.slice(0, i + 1).join("/")} is not a directory`);
    if (last && !st.isFile()) refuse("path", `"${rel}" exists and is not a regular file`);
    cur = next;
  }
  return { file: cur, root };
}

/** The lock file of a root (by its real path): one writer per root at a time. */
export function rootLockFile(realRoot: string): string {
  const name = createHash("sha256").update(realRoot).digest("hex").slice(0, 32);
  return join(tmpdir(), "idem-locks", `root-${name}.lock`);
}

/**
 * The lock of each configured root ({@link rootLockFile}), for `idem status` and `idem doctor` to
 * name a process that froze holding it. A root that does not exist is left out (doctor says why).
 * Never throws.
 */
export async function fileWriteLocks(roots: FileRoots): Promise<KindLock[]> {
  const out: KindLock[] = [];
  for (const [alias, r] of Object.entries(roots)) {
    const real = await fs.realpath(r.path).catch(() => undefined);
    if (real !== undefined)
      out.push({ key: `roots.${alias}`, what: `root ${alias}`, file: rootLockFile(real) });
  }
  return out;
}

/**
 * file.write: puts exactly these bytes at a path under a configured root, atomically (temporary file
 * in the same folder, fsync, rename, fsync of the folder), one writer per root at a time (a file
 * lock in the temp folder, keyed by the root's real path). Present: the file holds exactly the bytes.
 * Temporary files a killed writer left in the folder are removed before the next write there.
 */
export function createFileWriter(roots: FileRoots, maxFileBytes: number): FileWriter {
  const locks = new Map<string, FileLock>();
  const staleTemps = new StaleTemps();
  const rootOf = (alias: string) => {
    const r = aliasOf(roots, alias);
    if (!r)
      throw new IdemError("UNKNOWN_ALIAS", `unknown root alias "${alias}"`, {
        details: { field: "root" },
      });
    return r;
  };
  const probe = async (spec: FileWriteSpec, key: string): Promise<ProbeResult> => {
    checkKey(key);
    const bytes = fileWriteBytes(spec, maxFileBytes);
    const { file } = await resolveInRoot(rootOf(spec.root).path, spec.root, spec.path);
    const version = await fileVersion(file);
    if (version === null) return { status: "absent", detail: { size: null, version } };
    const st = await fs.stat(file).catch((e) => {
      throw ioError(e, `cannot read ${file}`);
    });
    if (st.size !== bytes.length) return { status: "absent", detail: { size: st.size, version } };
    let current: Buffer;
    try {
      current = await fs.readFile(file);
    } catch (e) {
      throw ioError(e, `cannot read ${file}`);
    }
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    if (current.equals(bytes))
      return { status: "present", detail: { sha256, bytes: bytes.length } };
    return { status: "absent", detail: { size: current.length, version } };
  };
  return {
    probe,
    async apply(spec, key, probed) {
      checkKey(key);
      const bytes = fileWriteBytes(spec, maxFileBytes);
      const { root } = await resolveInRoot(rootOf(spec.root).path, spec.root, spec.path);
      let lock = locks.get(root);
      if (!lock) {
        lock = new FileLock(rootLockFile(root));
        locks.set(root, lock);
      }
      const release = await lock.acquire();
      try {
        // Checked again under the lock: the way to the file may have changed while we waited.
        const { file } = await resolveInRoot(rootOf(spec.root).path, spec.root, spec.path);
        // Compare-and-swap, as git effects do: write only over the version that was probed, so a
        // holder paused past its lease cannot roll back a later write to the same path.
        const expected = probed?.status === "absent" ? probed.detail.version : undefined;
        if (expected !== undefined && (await fileVersion(file)) !== expected) {
          throw new IdemError(
            "TARGET_MOVED",
            `${spec.root}:${spec.path} changed since it was probed`,
            {
              details: { expected },
            },
          );
        }
        const dir = dirname(file);
        try {
          await fs.mkdir(dir, { recursive: true });
        } catch (e) {
          throw ioError(e, `cannot create ${dir}`);
        }
        await resolveInRoot(rootOf(spec.root).path, spec.root, spec.path);
        await staleTemps.sweep(dir);
        const tmp = join(dir, tempName());
        try {
          const fh = await fs.open(tmp, "wx", 0o644);
          try {
            await fh.writeFile(bytes);
            await fh.sync();
          } finally {
            await fh.close();
          }
          await fs.rename(tmp, file);
          const dh = await fs.open(dir, "r");
          try {
            await dh.sync();
          } finally {
            await dh.close();
          }
        } catch (e) {
          await fs.rm(tmp, { force: true });
          if (e instanceof IdemError) throw e;
          throw ioError(e, `cannot write ${file}`);
        }
        return { sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length };
      } finally {
        await release();
      }
    },
  };
}

/** Drops the per-root file locks at once (their linger cut short); one still held stays with its holder. */
export async function closeLocks(locks: Iterable<FileLock>): Promise<void> {
  for (const l of locks) await l.close();
}
