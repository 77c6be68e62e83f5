import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import type { FileHandle } from "node:fs/promises";
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
      if (code !== 0)
        throw new IdemError(
          "LOCKED",
          `${this.path} is held by another process (waited ${timeoutMs} ms)`,
        );
      return handle;
    } catch (e) {
      await handle.close();
      throw e;
    }
  }
}
