/**
 * How soon a write must be durable (docs/reliability.md, "What is durable when"). Without it, a
 * write is answered once it is durable: at SQLite's synchronous FULL after a group fsync of the
 * WAL, on PostgreSQL after a synchronous COMMIT.
 */
export interface WriteDurability {
  /**
   * Answered once committed, durable soon after: another process sees it at once and a crash of
   * the writing process loses nothing, but a power loss (on PostgreSQL, a crash of the server too)
   * within a short window may. The next durable write carries it to disk (SQLite's WAL and
   * PostgreSQL's are written in order), or an fsync of its own within ~100 ms (SQLite) or
   * 3 x `wal_writer_delay` (PostgreSQL). Only for writes whose loss recovery redoes by itself: the
   * settle of an effect that the next holder probes again, a run's completion, and (inside the
   * stores) a claim or a lease extension, whose loss is a lost lease taken over later.
   */
  soon?: boolean;
}
