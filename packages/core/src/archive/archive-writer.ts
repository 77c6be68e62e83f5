import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { ArchivedOutput } from "@idem/journal";

/**
 * The JSONL archive `idem prune` writes and `idem show --archive` reads: one file per prune under
 * `journal.archiveDir`, one ArchivedOutput per line. Each line is fsynced before `write` returns,
 * so an output is on disk in the archive before the journal deletes it; a crash leaves at most a
 * partial last line of an output the journal still holds. The file is created at the first write:
 * a prune that removes nothing leaves no file. Write errors (ENOSPC, EIO) propagate.
 */
export class ArchiveWriter {
  /** The archive file: `prune-<ISO time>-<pid>.jsonl` under the archive folder. */
  readonly file: string;
  private fd: number | undefined;
  /** Outputs written so far. */
  count = 0;

  /** Creates the archive folder (not the file) for a prune started at `now`. */
  constructor(dir: string, now: number) {
    const stamp = new Date(now).toISOString().replace(/[:.]/g, "-");
    this.file = join(dir, `prune-${stamp}-${process.pid}.jsonl`);
    mkdirSync(dir, { recursive: true });
  }

  /** Appends one archived output and fsyncs it (and, on the first write, the folder). */
  write(entry: ArchivedOutput): void {
    if (this.fd === undefined) {
      this.fd = openSync(this.file, "a");
      fsyncDir(join(this.file, ".."));
    }
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(this.fd);
    this.count += 1;
  }

  /** Closes the file; safe to call twice or without a write. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
