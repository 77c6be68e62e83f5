import type { JobEntry, JournalJobs, JournalLeaseHolders } from "@idem/journal";
import { ownerIsDead } from "@idem/runtime";
import type { Clock } from "@idem/schema";

/** How often a process looks for dead holders at most: a takeover within about this long. */
export const DEAD_HOLDER_SWEEP_MS = 500;

/** What one sweep did: the holders found dead and how many of their leases it ended. */
export interface DeadHolderSweepResult {
  owners: string[];
  expired: number;
}

/** How a sweep is made: of which leases, by whom, how often, and what counts as dead. */
export interface DeadHolderSweepOptions {
  /** The journal's runs or jobs. */
  holders: JournalLeaseHolders;
  clock: Clock;
  /** The sweeping process's own owner: never itself dead. */
  self: string;
  /** At most one sweep per this long (default DEAD_HOLDER_SWEEP_MS); the first one at once. */
  everyMs?: number;
  /** Default `ownerIsDead`: provably dead on this host (same boot, PID namespace; process gone). */
  isDead?: (owner: string) => boolean;
}

/**
 * A sweep for leases held by processes that are provably dead on this host (SIGKILLed, crashed):
 * their leases end now and the next claim takes their work over, counted as a lease expiry, without
 * waiting the lease out. A holder on another host, or one that cannot be told dead, keeps its lease
 * until it ends (a lease its live holder renews every third of it).
 *
 * `sweep()` reads the distinct holders (the work in flight, not the history), and writes only when
 * one is dead; it runs at most once per `everyMs` and answers undefined when it did not run.
 * @throws what the journal throws (UNAVAILABLE, a SQLite busy): the caller's claim loop handles it.
 */
export function createDeadHolderSweep(options: DeadHolderSweepOptions): {
  sweep(): Promise<DeadHolderSweepResult | undefined>;
} {
  const { holders, clock, self } = options;
  const everyMs = options.everyMs ?? DEAD_HOLDER_SWEEP_MS;
  const isDead = options.isDead ?? ownerIsDead;
  let last: number | undefined;
  return {
    async sweep() {
      const now = clock.now();
      if (last !== undefined && now - last < everyMs) return undefined;
      last = now;
      const owners = (await holders.leaseOwners()).filter((o) => o !== self && isDead(o));
      const expired = owners.length === 0 ? 0 : await holders.expireLeasesOf(owners);
      return { owners, expired };
    },
  };
}

/** Whose leases `endLeasesIfDead` may end: never `self`'s, only a holder `isDead` finds dead. */
export interface EndLeasesIfDeadOptions {
  /** The calling process's own owner: never itself dead. */
  self: string;
  /** Default `ownerIsDead`: provably dead on this host (same boot, PID namespace; process gone). */
  isDead?: (owner: string) => boolean;
}

/**
 * Ends now the leases of one holder when it is provably dead on this host: for a caller that found
 * a lease it wants held by `holder` (a JetStream delivery whose job's claim is held) and must not
 * wait for a sweep's interval. Answers true when the holder is dead (its unexpired leases ended
 * here, or already), so a claim asked again takes the work over with the bookkeeping of an expiry;
 * false, and nothing written, for a live holder, one that cannot be told dead, `self` or none.
 * @throws what the journal throws (UNAVAILABLE, a SQLite busy).
 */
export async function endLeasesIfDead(
  holders: JournalLeaseHolders,
  holder: string | null | undefined,
  options: EndLeasesIfDeadOptions,
): Promise<boolean> {
  const isDead = options.isDead ?? ownerIsDead;
  if (!holder || holder === options.self || !isDead(holder)) return false;
  await holders.expireLeasesOf([holder]);
  return true;
}

/**
 * The jobs whose delivery is held by a process provably dead on this host (a JetStream executor
 * SIGKILLed while its agent ran): running rows whose lease owner is dead, its lease ended or not,
 * with those owners. For a caller that ends those deliveries at the transport (a JetStream nak)
 * rather than waiting for them to come back after their ack wait. Read-only: reads the distinct
 * holders first (the work in flight), and the running jobs only when one of them is dead.
 * @throws what the journal throws (UNAVAILABLE, a SQLite busy).
 */
export async function jobsOfDeadHolders(
  jobs: Pick<JournalJobs, "leaseOwners" | "list">,
  options: EndLeasesIfDeadOptions,
): Promise<{ owners: string[]; jobs: JobEntry[] }> {
  const isDead = options.isDead ?? ownerIsDead;
  const owners = (await jobs.leaseOwners()).filter((o) => o !== options.self && isDead(o));
  if (owners.length === 0) return { owners, jobs: [] };
  const held = (await jobs.list({ state: "running" })).filter(
    (j) => j.leaseOwner !== null && owners.includes(j.leaseOwner),
  );
  return { owners, jobs: held };
}
