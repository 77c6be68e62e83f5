/**
 * Where SQLite keeps the locks of a journal file that another process can see and that block
 * writers: POSIX byte-range locks (fcntl), which a process holds until it releases them or exits,
 * including while it is stopped (SIGSTOP). From SQLite's file format: in WAL mode the `-shm` file's
 * lock bytes at 120 + n (WAL_WRITE_LOCK 0, WAL_CKPT_LOCK 1, WAL_RECOVER_LOCK 2); in rollback mode
 * the database file's RESERVED byte (0x40000001), which a writer holds for its transaction.
 */

/** One lock that blocks a journal's writers, and where it is. */
export interface JournalLockPlace {
  /** The file the lock is taken on. */
  file: string;
  /** The locked byte. */
  byte: number;
  /** What a process holding it is doing. */
  what: "write" | "checkpoint" | "recovery";
}

const WALINDEX_LOCK_OFFSET = 120;
const RESERVED_BYTE = 0x40000001;

/** The places of the write-blocking locks of the SQLite journal at `path`. Pure. */
export function sqliteLockPlaces(path: string): JournalLockPlace[] {
  const shm = `${path}-shm`;
  return [
    { file: shm, byte: WALINDEX_LOCK_OFFSET, what: "write" },
    { file: shm, byte: WALINDEX_LOCK_OFFSET + 1, what: "checkpoint" },
    { file: shm, byte: WALINDEX_LOCK_OFFSET + 2, what: "recovery" },
    { file: path, byte: RESERVED_BYTE, what: "write" },
  ];
}
