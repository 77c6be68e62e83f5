/**
 * The holders of a table's leases (runs or job deliveries), for a caller that can tell a dead
 * process from its owner ID (`ownerIsDead` of @idem/runtime): the journal knows no processes, the
 * caller knows no rows. A lease ended here is taken over by the next claim as an expired one is.
 */
export interface JournalLeaseHolders {
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
