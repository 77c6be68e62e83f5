import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { IdemError } from "@idem/schema";

/** How long to wait for the lock, how long to keep it after the last holder, and what to end first. */
export interface FileLockOptions {
  /** How long to wait for another process's lock before failing with LOCKED. */
  timeoutMs?: number;
  /** Keep the OS lock this long after the last release, so a burst of effects pays for it once. */
  lingerMs?: number;
  /** Called before the OS lock is dropped (to stop helpers that hold its descriptor). */
  beforeUnlock?: () => void;
}

/**
 * An exclusive lock between processes with flock(2) semantics, plus a queue inside this process.
 *
 * Node has no flock, so the lock is taken on our own open file description by a short-lived
 * `flock -x <fd>` child that inherits that descriptor: flock locks belong to the open file
 * description, so when the child exits the lock stays with us, and the kernel drops it when our
 * descriptor closes - including when this process is SIGKILLed. No stale lock can outlive its
 * holder, and no native addon is needed.
 *
 * A process that is alive but stopped (SIGSTOP, a debugger, a frozen cgroup) keeps the lock: it
 * could resume mid-write at any instant, so no waiter takes the lock from it. The holder writes
 * its pid, host and start time into the lock file, and a waiter that gives up says who holds the
 * lock and in what state (`stopped`, `running`, `gone`), so an operator can continue or kill it.
 */
export class FileLock {
  private handle: FileHandle | undefined;
  private tail: Promise<void> = Promise.resolve();
  private linger: NodeJS.Timeout | undefined;
  private holders = 0;

  constructor(
    readonly path: string,
    private readonly options: FileLockOptions = {},
  ) {}

  /**
   * Waits for the lock; resolves with the function that releases it.
   * @throws IdemError LOCKED when another process holds it past `timeoutMs`.
   */
  async acquire(): Promise<() => Promise<void>> {
    let releaseQueue!: () => void;
    const prev = this.tail;
    this.tail = new Promise<void>((r) => {
      releaseQueue = r;
    });
    await prev;
    this.holders += 1;
    if (this.linger) {
      clearTimeout(this.linger);
      this.linger = undefined;
    }
    try {
      if (!this.handle) this.handle = await this.lockOs();
    } catch (e) {
      this.holders -= 1;
      releaseQueue();
      throw e;
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      this.holders -= 1;
      const linger = this.options.lingerMs ?? 0;
      if (linger > 0) {
        this.linger = setTimeout(() => {
          this.linger = undefined;
          if (this.holders === 0) void this.unlockOs();
        }, linger);
        this.linger.unref();
      } else {
        await this.unlockOs();
      }
      releaseQueue();
    };
  }

  /** Drops the OS lock now (the queue inside this process is unaffected). */
  async close(): Promise<void> {
    if (this.linger) clearTimeout(this.linger);
    this.linger = undefined;
    if (this.holders === 0) await this.unlockOs();
  }

  /** The descriptor that holds the OS lock while it is held (children may inherit it). */
  get fd(): number | undefined {
    return this.handle?.fd;
  }

  private async unlockOs(): Promise<void> {
    if (this.handle) this.options.beforeUnlock?.();
    const h = this.handle;
    this.handle = undefined;
    await h?.close();
  }

  private async lockOs(): Promise<FileHandle> {
    await fs.mkdir(dirname(this.path), { recursive: true });
    const handle = await fs.open(this.path, "a", 0o644);
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    try {
      const code = await new Promise<number>((resolve, reject) => {
        const child = spawn("flock", ["-x", "-w", String(timeoutMs / 1000), "3"], {
          stdio: ["ignore", "ignore", "pipe", handle.fd],
        });
        let err = "";
        child.stderr?.on("data", (b: Buffer) => {
          err += b.toString();
        });
        child.on("error", (e) =>
          reject(new IdemError("UNAVAILABLE", `cannot run flock: ${e.message}`, { cause: e })),
        );
        child.on("close", (c) =>
          c === 0 || c === 1
            ? resolve(c)
            : reject(new IdemError("UNAVAILABLE", `flock failed: ${err.trim()}`)),
        );
      });
      if (code !== 0) {
        const holder = await describeHolder(this.path);
        throw new IdemError(
          "LOCKED",
          `${this.path} is held by another process: ${holder} (waited ${timeoutMs} ms)`,
        );
      }
      await recordHolder(handle);
      return handle;
    } catch (e) {
      await handle.close();
      throw e;
    }
  }
}

/** Writes who holds the lock into its file (the file is opened for append: truncate, then write). */
async function recordHolder(handle: FileHandle): Promise<void> {
  const holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  await handle.truncate(0);
  await handle.write(`${JSON.stringify(holder)}\n`);
}

/** The state of a process as /proc tells it, in the words an operator needs. */
export type HolderState = "running" | "stopped" | "zombie" | "gone" | "unknown";

/**
 * The state of process `pid` on this host from `/proc/<pid>/stat`: `stopped` for a SIGSTOPped or
 * traced process (T, t), `zombie` (Z), `gone` when there is no such process, `unknown` where /proc
 * is not available; any other state is `running` (runnable or sleeping on I/O).
 */
export async function processState(pid: number): Promise<HolderState> {
  let stat: string;
  try {
    stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") return "unknown";
    try {
      await fs.access("/proc/self/stat");
      return "gone";
    } catch {
      return "unknown";
    }
  }
  // The command name is in parentheses and may hold spaces or parentheses: the state follows the last ")".
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  if (state === "T" || state === "t") return "stopped";
  if (state === "Z") return "zombie";
  return "running";
}

const HINTS: Record<HolderState, string> = {
  stopped:
    "stopped (SIGSTOP or a debugger): it keeps the lock until it is continued (kill -CONT) or killed",
  running: "running",
  zombie: "exited (a zombie not yet reaped); a git child it started may still hold the lock",
  gone: "gone; a git child it started may still hold the lock until it exits",
  unknown: "state unknown",
};

/**
 * Who holds the lock at `path`, from the record its holder wrote into the file, for the LOCKED
 * message: `pid 123 on host h since <time>, stopped (...)`. Never throws: an unreadable or
 * half-written record says so.
 */
export async function describeHolder(path: string): Promise<string> {
  let holder: { pid?: unknown; host?: unknown; since?: unknown };
  try {
    holder = JSON.parse(await fs.readFile(path, "utf8"));
  } catch {
    return "holder not recorded";
  }
  if (typeof holder?.pid !== "number" || !Number.isInteger(holder.pid))
    return "holder not recorded";
  const host = typeof holder.host === "string" ? holder.host : "?";
  const since = typeof holder.since === "string" ? ` since ${holder.since}` : "";
  const where = `pid ${holder.pid} on host ${host}${since}`;
  if (host !== hostname()) return `${where} (another host: its state cannot be seen from here)`;
  return `${where}, ${HINTS[await processState(holder.pid)]}`;
}
