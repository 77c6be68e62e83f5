import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { type HeldLeases, type JournalStore, sqliteLockPlaces } from "@idem/journal";
import {
  describeProcess,
  fileLocksOn,
  ownerIsDead,
  type ProcessState,
  parseOwnerId,
} from "@idem/runtime";
import { type Config, journalLocationOf } from "@idem/schema";
import { git } from "../doctor/target-checks.js";

/**
 * A process that holds a lock or a lease past its time: frozen (SIGSTOP, a debugger), gone while a
 * child keeps its lock, or whose lease ran out with nobody taking its work over. What `idem
 * status`, `idem jobs` and `idem doctor` name, so the person on call knows which process to end
 * (docs/runbook.md, "A hung process").
 */
export interface StuckHolder {
  /** The part it holds, as doctor keys it: `journal`, `repos.<alias>`, `runs`, `jobs`. */
  key: string;
  /** What it holds, for people: `the journal's write lock`, `2 run leases (first: job-7)`. */
  holds: string;
  /** Where the holder runs; null when not known. */
  host: string | null;
  pid: number | null;
  /** Its state when it runs on this host; `elsewhere` on another host; `unknown` when unreadable. */
  state: ProcessState | "elsewhere";
  /** When it took the lock, or when its lease ran out (epoch ms); null when not known. */
  since: number | null;
  /** Why it is named, in a sentence. */
  finding: string;
  /** What to do about it. */
  fix: string;
}

/** How long a lease may have run out before its holder is named: a running claimer takes it within its poll. */
const LEASE_GRACE_MS = 1_000;

/** The states of a process that will not let go by itself. */
const FROZEN: readonly string[] = ["stopped", "zombie"];

const pidOnHost = (pid: number, host: string) =>
  host === hostname() ? `pid ${pid}` : `pid ${pid} on host ${host}`;

/** What to do with a frozen holder on this host. */
const killFrozen = (pid: number, then: string) =>
  `it is frozen (SIGSTOP or a debugger) and will never let go: end it with \`kill -9 ${pid}\` (or let it go on with \`kill -CONT ${pid}\`); ${then}`;

/**
 * The processes holding the write lock of a SQLite journal right now (POSIX locks on its lock
 * bytes, from /proc/locks: this host only), other than this process. Frozen ones only, unless
 * `any` (doctor, after its open waited the busy timeout out). Empty on PostgreSQL.
 */
export function journalLockHolders(config: Config, options: { any?: boolean } = {}): StuckHolder[] {
  const at = journalLocationOf(config);
  if ("url" in at) return [];
  const found = new Map<number, string>();
  for (const place of sqliteLockPlaces(at.path)) {
    for (const l of fileLocksOn(place.file)) {
      const covers = l.type === "WRITE" && l.start <= place.byte && place.byte <= l.end;
      if (covers && l.pid > 0 && l.pid !== process.pid && !found.has(l.pid))
        found.set(l.pid, place.what);
    }
  }
  const out: StuckHolder[] = [];
  for (const [pid, what] of found) {
    const p = describeProcess(pid);
    if (!options.any && !FROZEN.includes(p.state)) continue;
    const command = p.command ? ` (${p.command.slice(0, 80)})` : "";
    out.push({
      key: "journal",
      holds: `the journal's ${what} lock`,
      host: p.host,
      pid,
      state: p.state,
      since: p.startedAt ?? null,
      finding: `${pidOnHost(pid, p.host)}${command} holds the journal's ${what} lock and is ${p.state}: no other process can write the journal until it lets go`,
      fix: FROZEN.includes(p.state)
        ? killFrozen(pid, "the journal is then free at once, and its runs are taken over")
        : `wait for it to finish; if it never does, end it (\`kill ${pid}\`, then \`kill -9 ${pid}\`): what it had not committed is redone by the next holder`,
    });
  }
  return out;
}

/** The holder a repository lock file records (FileLock of @idem/effects writes it). */
function lockRecord(file: string): { pid: number; host: string; since: number | null } | undefined {
  try {
    const r = JSON.parse(readFileSync(file, "utf8")) as {
      pid?: unknown;
      host?: unknown;
      since?: unknown;
    };
    if (typeof r.pid !== "number" || !Number.isInteger(r.pid) || typeof r.host !== "string")
      return undefined;
    const since = typeof r.since === "string" ? Date.parse(r.since) : Number.NaN;
    return { pid: r.pid, host: r.host, since: Number.isNaN(since) ? null : since };
  } catch {
    return undefined;
  }
}

/**
 * Each configured repository whose idem lock (`<git dir>/idem/lock`, flock(2)) is held right now
 * by a process that will not let go: frozen, or gone while a git child it started keeps the lock.
 * A lock held by a running process is its work, not named. Never throws.
 */
export async function repoLockHolders(config: Config): Promise<StuckHolder[]> {
  const out: StuckHolder[] = [];
  for (const [alias, repo] of Object.entries(config.repos)) {
    let gitDir: string;
    try {
      const r = await git(repo.path, ["rev-parse", "--absolute-git-dir"]);
      if (r.code !== 0) continue;
      gitDir = r.stdout.trim();
    } catch {
      continue;
    }
    const file = join(gitDir, "idem", "lock");
    if (!fileLocksOn(file).some((l) => l.type === "WRITE")) continue;
    const holder = lockRecord(file);
    if (!holder) continue;
    const onHere = holder.host === hostname();
    const state: StuckHolder["state"] = onHere ? describeProcess(holder.pid).state : "elsewhere";
    if (!FROZEN.includes(state) && state !== "gone") continue;
    const who = pidOnHost(holder.pid, holder.host);
    out.push({
      key: `repos.${alias}`,
      holds: `repo ${alias}'s lock`,
      host: holder.host,
      pid: holder.pid,
      state,
      since: holder.since,
      finding:
        state === "gone"
          ? `${file} is still held: ${who} took it and is gone, and a git child it started keeps it; no effect on repo ${alias} is applied until it is free`
          : `${file} is held by ${who}, which is ${state}: no effect on repo ${alias} is applied until it lets go (the other interpreters wait, then retry)`,
      fix:
        state === "gone"
          ? `find the git process that holds it (\`fuser -v ${file}\`) and end it; the next interpreter then takes the lock`
          : killFrozen(holder.pid, "the next interpreter takes the lock and its runs over"),
    });
  }
  return out;
}

/**
 * The owners of run or job leases that are past their time: the lease ran out and nobody took the
 * work over (no interpreter or executor runs), or its holder on this host is frozen or dead.
 * A live holder within its lease is not named. Reads the journal only.
 */
export async function leaseHoldersPastTime(
  journal: JournalStore,
  now: number = Date.now(),
): Promise<StuckHolder[]> {
  const out: StuckHolder[] = [];
  const of = async (key: "runs" | "jobs", held: HeldLeases[]) => {
    for (const h of held) {
      const o = parseOwnerId(h.owner);
      const host = o?.host ?? null;
      const pid = o?.pid ?? null;
      let state: StuckHolder["state"] = "unknown";
      if (o && host !== hostname()) state = "elsewhere";
      else if (o && pid !== null)
        state = ownerIsDead(h.owner) ? "gone" : describeProcess(pid).state;
      const ended = h.firstUntil + LEASE_GRACE_MS <= now;
      if (!ended && !FROZEN.includes(state) && state !== "gone") continue;
      const what = key === "runs" ? "run" : "job delivery";
      const holds = `${h.count} ${what} lease${h.count === 1 ? "" : "s"} (first: ${h.jobId})`;
      const who = pid === null ? `owner ${h.owner}` : pidOnHost(pid, host ?? "?");
      const taker =
        key === "runs"
          ? "an interpreter (`idem interpreter`, or `idem up`)"
          : "an executor (`idem executor`, or `idem up`)";
      out.push({
        key,
        holds,
        host,
        pid,
        state,
        since: ended ? h.firstUntil : null,
        finding: ended
          ? `${who} (${state}) holds ${holds} that ran out at ${new Date(h.firstUntil).toISOString()} and nobody has taken over`
          : `${who} holds ${holds} and is ${state}`,
        fix:
          FROZEN.includes(state) && pid !== null
            ? killFrozen(pid, `${taker} takes its work over`)
            : `start ${taker} if none runs: it takes the work over at once (same host) or when the lease ends`,
      });
    }
  };
  await of("runs", await journal.runs.heldLeases());
  await of("jobs", await journal.jobs.heldLeases());
  return out;
}

/**
 * Every holder past its time (`journalLockHolders`, `repoLockHolders`, `leaseHoldersPastTime`),
 * for `idem status` and `idem jobs`. Read-only; never waits on a lock.
 */
export async function readStuckHolders(
  config: Config,
  journal: JournalStore,
  now: number = Date.now(),
): Promise<StuckHolder[]> {
  return [
    ...journalLockHolders(config),
    ...(await repoLockHolders(config)),
    ...(await leaseHoldersPastTime(journal, now)),
  ];
}
