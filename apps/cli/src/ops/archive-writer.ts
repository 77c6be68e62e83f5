import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { ArchivedOutput } from "@idem/journal";

/**
 * The JSONL archive `idem prune` writes and `idem show --archive` reads: one file per prune under
 * `journal.archiveDir`, one ArchivedOutput per line. Each line is fsynced before `write` returns,
 * so an output is on disk in the archive before the journal deletes it.
 */
export class ArchiveWriter {
  readonly file: string;
  private fd: number | undefined;
  count = 0;

  constructor(dir: string, now: number) {
    const stamp = new Date(now).toISOString().replace(/[:.]/g, "-");
    this.file = join(dir, `prune-${stamp}-${process.pid}.jsonl`);
    mkdirSync(dir, { recursive: true });
  }

  write(entry: ArchivedOutput): void {
    if (this.fd === undefined) {
      this.fd = openSync(this.file, "a");
      fsyncDir(join(this.file, ".."));
    }
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(this.fd);
    this.count += 1;
  }

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
