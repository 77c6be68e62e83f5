import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { join } from "node:path";

/**
 * The temporary files of `file.write` (docs/concepts.md): `.idem-<pid>-<12 hex>.tmp` beside the
 * file, renamed over it once written and synced. A writer killed before the rename leaves one
 * behind; the next write into that folder removes it (issue 31).
 */
const TEMP_NAME = /^\.idem-(?:(\d{1,10})-)?[0-9a-f]{12}\.tmp$/;

/** A temporary file older than this is stale whoever wrote it (a write takes seconds at most). */
export const STALE_TEMP_MS = 60 * 60 * 1000;

/** How long a folder's scan for stale temporary files holds before the next write scans again. */
const RESCAN_MS = 10 * 60 * 1000;

/** The name of a new temporary file for this process. */
export function tempName(): string {
  return `.idem-${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
}

/**
 * Whether a folder entry is a temporary file a dead writer left: its name is idem's, and the pid it
 * names is not alive (another process's, never this one's), or it is older than STALE_TEMP_MS (a
 * name without a pid, from before names carried one, or a pid reused since). Pure.
 */
export function isStaleTemp(name: string, ageMs: number, alive: (pid: number) => boolean): boolean {
  const m = TEMP_NAME.exec(name);
  if (!m) return false;
  if (ageMs > STALE_TEMP_MS) return true;
  const pid = m[1] === undefined ? undefined : Number(m[1]);
  return pid !== undefined && pid !== process.pid && !alive(pid);
}

/** Whether a process with this pid exists on this host (one of another user's counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * Removes the stale temporary files of one folder (see {@link isStaleTemp}), at most once per
 * RESCAN_MS per folder for this instance. Called under the root's lock, before a write into the
 * folder. Only regular files are removed; a folder that cannot be read is left alone (the write
 * then says why). Never throws.
 */
export class StaleTemps {
  private readonly scanned = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  async sweep(dir: string): Promise<void> {
    const t = this.now();
    const last = this.scanned.get(dir);
    if (last !== undefined && t - last < RESCAN_MS) return;
    if (this.scanned.size >= 10_000) this.scanned.clear();
    this.scanned.set(dir, t);
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!TEMP_NAME.test(name)) continue;
      const file = join(dir, name);
      try {
        const st = await fs.lstat(file);
        if (st.isFile() && isStaleTemp(name, t - st.mtimeMs, processAlive))
          await fs.rm(file, { force: true });
      } catch {
        // Gone meanwhile, or unreadable: nothing to do for this write.
      }
    }
  }
}
