/**
 * The holders of a table's leases (runs or job deliveries), for a caller that can tell a dead
 * process from its owner ID (`ownerIsDead` of @idem/runtime): the journal knows no processes, the
 * caller knows no rows. A lease ended here is taken over by the next claim as an expired one is.
 */
export interface JournalLeaseHolders {
  /**
   * Each owner of leases of running rows with how many it holds and when the first of them ends
   * (or ended), epoch ms: for an operator's view of who holds what, past its time or not. Read
   * through the index of unfinished rows, as `leaseOwners`. Read-only.
   */
  heldLeases(): Promise<HeldLeases[]>;
  /**
   * The distinct owners of the leases of running rows, expired or not, read through the index of
   * unfinished rows (its cost follows the work in flight, not the journal's history). Read-only.
   */
  leaseOwners(): Promise<string[]>;
  /**
   * Ends now the unexpired leases of running rows still held by one of `owners` (the caller found
   * them dead): due at once, each then taken over by the next claim with the bookkeeping of an
   * expiry (a lease expiry counted, a takeover event naming the previous owner). Atomic; a row
   * claimed by someone else meanwhile is left alone. Returns how many leases it ended. Not fsynced
   * on its own: a lost write leaves the lease to run out as it would have.
   */
  expireLeasesOf(owners: readonly string[]): Promise<number>;
}

/** One owner's leases (see `JournalLeaseHolders.heldLeases`). */
export interface HeldLeases {
  owner: string;
  count: number;
  /** When its first lease ends or ended, epoch ms (the journal's clock). */
  firstUntil: number;
  /** One job it holds (the one whose lease ends first), for the operator's `idem show`. */
  jobId: string;
}
