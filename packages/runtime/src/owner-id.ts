import { randomUUID } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/**
 * Owner IDs: the name a process writes into journal leases and events. Where /proc tells them, it
 * carries what makes the process checkable for death by another process on the same host: the
 * kernel's boot ID, the PID namespace, the PID and that process's start time. A PID alone is not
 * enough (PIDs are reused; containers share a host name but not a PID namespace).
 */

/** What an owner ID says about the process that made it. */
export interface OwnerIdentity {
  host: string;
  pid: number;
  /** Disambiguates two owners of one process (and any two owners at all). */
  random: string;
  /** /proc/sys/kernel/random/boot_id: changes at every boot. */
  bootId: string;
  /** The inode of the PID namespace (`readlink /proc/self/ns/pid` is `pid:[<inode>]`). */
  pidNs: string;
  /** Field 22 of /proc/<pid>/stat: clock ticks after boot at which the process started. */
  startTime: string;
}

/** `<host>:<pid>:<random>@<boot id>/<pid ns>/<start time>`; the part after `@` only where /proc is. */
const OWNER_RE = /^(.+):(\d{1,10}):([0-9a-f]{8})@([0-9a-f-]{36})\/(\d{1,20})\/(\d{1,20})$/;
/** Longer owners are not ours: not parsed (a bound on the work a hostile string can cause). */
const MAX_OWNER_LENGTH = 512;
/** The largest PID Linux hands out (PID_MAX_LIMIT on 64-bit). */
const PID_MAX = 4_194_304;

/** Reads a /proc file or link; undefined when it cannot be read (no /proc, no such process, EACCES). */
function readProc(read: () => string): string | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** This host's boot ID and PID namespace, read once (they cannot change while a process lives). */
let hostIdentity: { bootId: string; pidNs: string } | null | undefined;
function ownHostIdentity(): { bootId: string; pidNs: string } | undefined {
  if (hostIdentity === undefined) {
    const bootId = readProc(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
    const pidNs = readProc(() => readlinkSync("/proc/self/ns/pid"))?.match(/^pid:\[(\d+)\]$/)?.[1];
    hostIdentity =
      bootId !== undefined && /^[0-9a-f-]{36}$/.test(bootId) && pidNs !== undefined
        ? { bootId, pidNs }
        : null;
  }
  return hostIdentity ?? undefined;
}

/** Fields 3.. of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
function statFields(pid: number): string[] | undefined {
  const stat = readProc(() => readFileSync(`/proc/${pid}/stat`, "utf8"));
  if (stat === undefined) return undefined;
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Field 22 of /proc/<pid>/stat (the process's start time), or undefined when it cannot be read. */
export function processStartTime(pid: number): string | undefined {
  const t = statFields(pid)?.[22 - 3];
  return t !== undefined && /^\d+$/.test(t) ? t : undefined;
}

/** The owner ID of `parts`, in the form `parseOwnerId` reads. */
export function formatOwnerId(parts: OwnerIdentity): string {
  const { host, pid, random, bootId, pidNs, startTime } = parts;
  return `${host}:${pid}:${random}@${bootId}/${pidNs}/${startTime}`;
}

/**
 * A process's name in journal leases and events: `<host>:<pid>:<random>@<boot id>/<pid ns>/<start
 * time>`, so two processes on one host, or one restarted with the same pid, never share an owner
 * (a lease token still decides who holds a lease; the owner only says who it was), and another
 * process on this host can tell when it is dead (`ownerIsDead`). Where /proc cannot tell those
 * (not Linux), `<host>:<pid>:<random>`, which is never found dead.
 */
export function createOwnerId(): string {
  const host = hostname();
  const random = randomUUID().slice(0, 8);
  const own = ownHostIdentity();
  const startTime = processStartTime(process.pid);
  if (own === undefined || startTime === undefined) return `${host}:${process.pid}:${random}`;
  return formatOwnerId({ host, pid: process.pid, random, ...own, startTime });
}

/** What an owner ID made by `createOwnerId` on Linux says; undefined for any other string. */
export function parseOwnerId(owner: string): OwnerIdentity | undefined {
  if (typeof owner !== "string" || owner.length > MAX_OWNER_LENGTH) return undefined;
  const m = OWNER_RE.exec(owner);
  if (!m) return undefined;
  const [, host, pid, random, bootId, pidNs, startTime] = m as unknown as string[];
  const n = Number(pid);
  if (!Number.isSafeInteger(n) || n < 1 || n > PID_MAX) return undefined;
  return {
    host: host as string,
    pid: n,
    random: random as string,
    bootId: bootId as string,
    pidNs: pidNs as string,
    startTime: startTime as string,
  };
}

/**
 * True only when the process that made `owner` is provably dead: it names this host, this boot and
 * this PID namespace, and its PID is gone, or now belongs to a process that started at another
 * time, or is a zombie (killed, not yet reaped). Anything else is false: another host or boot or
 * container, an owner in the old form or not made by `createOwnerId`, a process that exists but
 * cannot be read (another user's, under `hidepid`). Never throws.
 */
export function ownerIsDead(owner: string): boolean {
  const o = parseOwnerId(owner);
  if (o === undefined || o.host !== hostname()) return false;
  const own = ownHostIdentity();
  if (own === undefined || own.bootId !== o.bootId || own.pidNs !== o.pidNs) return false;
  const fields = statFields(o.pid);
  if (fields === undefined) return !processExists(o.pid);
  const startTime = fields[22 - 3];
  if (startTime === undefined || !/^\d+$/.test(startTime)) return false;
  if (startTime !== o.startTime) return true;
  const state = fields[0];
  return state === "Z" || state === "X";
}

/**
 * Whether a process with this PID exists (signal 0): a process of another user hidden from /proc
 * (`hidepid`) answers EPERM and exists; only ESRCH says there is none.
 */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
