import {
  appendFileSync,
  closeSync,
  existsSync,
  fdatasync as fdatasyncCb,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { IdemError } from "@idem/schema";
import type { Signature } from "./git-objects.js";
import type { RefFiles } from "./ref-files.js";

const fdatasync = promisify(fdatasyncCb);

/** What a transaction in process needs: the repository's git folder and its refs as files. */
export interface InProcessRefs {
  alias: string;
  gitDir: string;
  refs: RefFiles;
  hexLength: number;
  /** fsync each ref's lock file before it is renamed into place (git's `core.fsync=reference`). */
  durable: boolean;
}

/** One ref to move: to `next`, from `old` (null: it must not exist; undefined: wherever it is). */
interface RefMove {
  ref: string;
  next: string;
  old: string | null | undefined;
}

/** A ref whose lock this transaction holds, and the value it found there. */
interface Held {
  move: RefMove;
  lock: string;
  fd: number;
  current: string | null;
}

/**
 * The moves of `update-ref --stdin` lines, when every line is one this module does exactly as git
 * would: `update <ref> <new> [<old>]` or `create <ref> <new>` of a ref under refs/, in a repository
 * whose refs are files. Undefined otherwise (a delete, a linked worktree, the reftable backend):
 * the caller runs git. A ref RefFiles cannot read as git would (a symbolic ref) is found under its
 * lock, and goes to git too.
 */
function parseMoves(lines: string[], p: InProcessRefs): RefMove[] | undefined {
  if (!p.refs.usable) return undefined;
  const zero = "0".repeat(p.hexLength);
  const oid = new RegExp(`^[0-9a-f]{${p.hexLength}}$`);
  const moves: RefMove[] = [];
  for (const line of lines) {
    const [op, ref, next, old, ...rest] = line.split(" ");
    if (rest.length > 0 || !ref || !next || !oid.test(next) || next === zero) return undefined;
    if (!ref.startsWith("refs/") || ref.includes("..") || ref.endsWith(".lock")) return undefined;
    if (op === "create" && old === undefined) moves.push({ ref, next, old: null });
    else if (op === "update" && old === undefined) moves.push({ ref, next, old: undefined });
    else if (op === "update" && old !== undefined && oid.test(old))
      moves.push({ ref, next, old: old === zero ? null : old });
    else return undefined;
  }
  return new Set(moves.map((m) => m.ref)).size === moves.length ? moves : undefined;
}

/**
 * git's ref transaction for the files backend, in process, for the branch moves of effects: each
 * ref's `<ref>.lock` created exclusively (git's own lock, so a human's git and idem exclude each
 * other as two gits do), its value read under the lock and compared with the expected one, the new
 * value written, every lock file fsynced at once (git fsyncs them one after the other), then each
 * lock renamed onto its ref and the reflogs git keeps appended: the ref's own when it has one, and
 * HEAD's when HEAD points at a branch moved (under HEAD.lock, as git takes it).
 *
 * Every file is created first (the locks, then what `steps.stage` writes), and only then is
 * everything fsynced at once: the lock files and, by `steps.syncObjects`, the effect's objects, so
 * no ref points at an object that is not on disk. (A file created while an fsync of the same file
 * system runs waits for that fsync's journal commit: creating after fsyncing would pay for each.)
 *
 * Answers false, having changed nothing, when the lines are not ones it does exactly as git would
 * (see parseMoves) or a ref's folder cannot be made: the caller runs git then. Runs under idem's
 * repo lock only. A kill leaves at most its lock files, which the next holder's recovery removes
 * (the pending marker names the refs, and HEAD.lock goes too), the refs renamed so far moved: the
 * same as a git killed in its commit phase, which the key index and the probe are built for.
 * @throws IdemError LOCKED when a git lock file is held; TARGET_MOVED when a ref is not where the
 * transaction expects it; IO when a write, an fsync or a rename fails; the error of a step. Nothing
 * has moved after any of them but IO in a rename.
 */
export async function moveRefsInProcess(
  p: InProcessRefs,
  lines: string[],
  steps: { syncObjects: () => Promise<void>; stage: () => Promise<void>; mover: Signature },
): Promise<boolean> {
  const moves = parseMoves(lines, p);
  if (!moves) return false;
  const held: Held[] = [];
  let headLock: string | undefined;
  let headBranch: string | undefined;
  const release = () => {
    for (const h of held.splice(0)) {
      closeSync(h.fd);
      rmSync(h.lock, { force: true });
    }
    if (headLock) rmSync(headLock, { force: true });
  };
  try {
    headBranch = headTarget(p.gitDir, moves);
    if (headBranch) {
      const lock = join(p.gitDir, "HEAD.lock");
      closeSync(takeLock(p, lock));
      headLock = lock;
    }
    for (const move of moves) {
      const path = join(p.gitDir, move.ref);
      try {
        mkdirSync(dirname(path), { recursive: true });
      } catch (e) {
        // A file where a folder should be (a ref named like this one's folder): git says why.
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== "ENOTDIR" && code !== "EEXIST") throw e;
        release();
        return false;
      }
      const lock = `${path}.lock`;
      const fd = takeLock(p, lock);
      // git reads the ref once its lock is held; so does this.
      const current = p.refs.read(move.ref);
      held.push({ move, lock, fd, current: current ?? null });
      if (current === undefined) {
        release();
        return false;
      }
      if (move.old === null && current !== null)
        throw moved(p, `cannot lock ref '${move.ref}': reference already exists`);
      if (move.old && current !== move.old) {
        throw moved(
          p,
          `cannot lock ref '${move.ref}': is at ${current ?? "nothing"} but expected ${move.old}`,
        );
      }
      writeSync(fd, `${move.next}\n`);
    }
    await steps.stage().catch((e: unknown) => Promise.reject(new Passed(e)));
    const syncs = p.durable ? held.map((h) => fdatasync(h.fd)) : [];
    // Every fsync ends before a descriptor is closed, whichever fails.
    const [objects, ...refs] = await Promise.allSettled([steps.syncObjects(), ...syncs]);
    if (objects?.status === "rejected") throw new Passed(objects.reason);
    const failed = refs.find((r) => r.status === "rejected");
    if (failed) throw ioError(p, "a ref's lock file could not be fsynced", failed.reason);
  } catch (e) {
    release();
    if (e instanceof Passed) throw e.error;
    if (e instanceof IdemError) throw e;
    throw ioError(p, "a ref could not be locked", e);
  }
  const zero = "0".repeat(p.hexLength);
  try {
    for (const h of held) {
      closeSync(h.fd);
      h.fd = -1;
    }
    for (const h of held) renameSync(h.lock, join(p.gitDir, h.move.ref));
    for (const h of held) {
      const line = logLine(h.current ?? zero, h.move.next, steps.mover);
      appendLog(join(p.gitDir, "logs", h.move.ref), line);
      if (h.move.ref === headBranch) appendLog(join(p.gitDir, "logs", "HEAD"), line);
    }
  } catch (e) {
    for (const h of held) {
      if (h.fd >= 0) closeSync(h.fd);
      rmSync(h.lock, { force: true });
    }
    throw ioError(p, "a ref could not be moved", e);
  } finally {
    if (headLock) rmSync(headLock, { force: true });
  }
  return true;
}

/** Creates a git lock file exclusively and answers its descriptor. @throws IdemError LOCKED. */
function takeLock(p: InProcessRefs, lock: string): number {
  try {
    return openSync(lock, "wx", 0o666);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    throw new IdemError(
      "LOCKED",
      `repo "${p.alias}": a git lock file is held: Unable to create '${lock}': File exists.`,
    );
  }
}

/** The branch HEAD points at (`refs/heads/...`), or undefined (detached, unreadable). */
function readHead(gitDir: string): string | undefined {
  let head: string;
  try {
    head = readFileSync(join(gitDir, "HEAD"), "utf8");
  } catch {
    return undefined;
  }
  return /^ref: (refs\/heads\/[^\n]+)\n?$/.exec(head)?.[1];
}

/** The moved branch HEAD points at, if any: its move is logged in HEAD's reflog too. */
function headTarget(gitDir: string, moves: RefMove[]): string | undefined {
  const branch = readHead(gitDir);
  return branch && moves.some((m) => m.ref === branch) ? branch : undefined;
}

/** Appends a line to a reflog git keeps (one that does not exist is not started). */
function appendLog(path: string, line: string): void {
  if (existsSync(path)) appendFileSync(path, line);
}

/** A reflog line as `git update-ref` writes it without a message. */
function logLine(old: string, next: string, mover: Signature): string {
  return `${old} ${next} ${mover.name} <${mover.email}> ${Math.floor(mover.at / 1000)} +0000\n`;
}

/** A step's own error, passed on as it came. */
class Passed {
  constructor(readonly error: unknown) {}
}

function moved(p: InProcessRefs, message: string): IdemError {
  return new IdemError("TARGET_MOVED", `repo "${p.alias}": the branch moved: ${message}`);
}

function ioError(p: InProcessRefs, what: string, e: unknown): IdemError {
  const code = (e as NodeJS.ErrnoException).code ?? String(e);
  return new IdemError("IO", `repo "${p.alias}": ${what} (${code})`, { cause: e });
}
