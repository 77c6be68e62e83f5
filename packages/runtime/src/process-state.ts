import { readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";

/**
 * What an operator needs to know of a process that holds something (a lock, a lease) on this
 * host: whether it runs, is frozen, or is gone, and since when it lives. Read from /proc; where
 * /proc cannot tell, `unknown`.
 */

/** The state of a process in the words an operator needs. */
export type ProcessState = "running" | "stopped" | "zombie" | "gone" | "unknown";

/** A process on this host as /proc tells it. */
export interface ProcessInfo {
  pid: number;
  host: string;
  state: ProcessState;
  /** When the process started, epoch ms; undefined when /proc cannot tell. */
  startedAt?: number;
  /** Its command line, space-joined, at most 200 characters; undefined when unreadable. */
  command?: string;
}

/** The kernel's clock ticks per second for /proc/<pid>/stat times: USER_HZ, 100 on every Linux ABI. */
const USER_HZ = 100;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The boot time of this host, epoch ms, from /proc/stat's `btime`; undefined without /proc. */
function bootTimeMs(): number | undefined {
  const m = read("/proc/stat")?.match(/^btime (\d+)$/m);
  return m ? Number(m[1]) * 1000 : undefined;
}

/**
 * Process `pid` on this host: `stopped` for a SIGSTOPped or traced process (T, t), `zombie` (Z, X),
 * `gone` when there is no such process, `unknown` where /proc is not there; `running` otherwise
 * (runnable, or asleep waiting for something). Never throws.
 */
export function describeProcess(pid: number): ProcessInfo {
  const host = hostname();
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) {
    return { pid, host, state: read("/proc/self/stat") === undefined ? "unknown" : "gone" };
  }
  // The command name is in parentheses and may hold spaces or parentheses: fields follow the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const code = fields[0];
  const state: ProcessState =
    code === "T" || code === "t" ? "stopped" : code === "Z" || code === "X" ? "zombie" : "running";
  const ticks = Number(fields[22 - 3]);
  const boot = bootTimeMs();
  const cmdline = read(`/proc/${pid}/cmdline`);
  return {
    pid,
    host,
    state,
    ...(boot !== undefined &&
      Number.isFinite(ticks) && { startedAt: boot + (ticks * 1000) / USER_HZ }),
    ...(cmdline !== undefined && {
      command: cmdline.split("\0").filter(Boolean).join(" ").slice(0, 200),
    }),
  };
}

/** How a lock is held, as /proc/locks lists it. */
export interface HeldFileLock {
  /** FLOCK (flock(2)), POSIX (fcntl byte ranges, as SQLite takes them) or OFDLCK. */
  kind: string;
  type: "READ" | "WRITE";
  /** The process that took it, in this PID namespace; 0 when it is in another one. */
  pid: number;
  start: number;
  /** The last byte, or Infinity for "to the end of the file". */
  end: number;
}

/**
 * The locks held on `path` right now, from /proc/locks (this host's kernel; a lock taken on another
 * host of a network file system is not there). Waiters (`->` lines) are left out. Empty when the
 * file or /proc/locks cannot be read. For a FLOCK lock the PID is the process that called flock,
 * which may have handed the descriptor on and exited: the lock is held while any descriptor is open.
 */
export function fileLocksOn(path: string): HeldFileLock[] {
  let id: { dev: number; ino: number };
  try {
    id = statSync(path);
  } catch {
    return [];
  }
  const table = read("/proc/locks");
  if (table === undefined) return [];
  const major = ((id.dev >> 8) & 0xfff) | (Math.floor(id.dev / 2 ** 32) & ~0xfff);
  const minor = (id.dev & 0xff) | ((id.dev >> 12) & ~0xff & 0xfffff);
  const out: HeldFileLock[] = [];
  for (const line of table.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8 || f[1] === "->") continue;
    const [, kind, , type, pid, device, start, end] = f as [string, ...string[]];
    const [maj, min, ino] = (device as string).split(":");
    if (Number(ino) !== id.ino) continue;
    if (Number.parseInt(maj ?? "", 16) !== major || Number.parseInt(min ?? "", 16) !== minor)
      continue;
    if (type !== "READ" && type !== "WRITE") continue;
    out.push({
      kind: kind as string,
      type,
      pid: Number(pid),
      start: Number(start),
      end: end === "EOF" ? Number.POSITIVE_INFINITY : Number(end),
    });
  }
  return out;
}
