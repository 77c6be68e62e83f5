import { posix } from "node:path";
import type { JournalStore, OutputRecord } from "@idem/journal";
import type { FileWriteSpec } from "@idem/schema";

/** How far back in recording time an incremental scan reaches, against clock steps between writers. */
const SCAN_SLACK_MS = 60_000;

/**
 * The latest recorded file.write per root and path, built from the journal's outputs and kept up to
 * date incrementally (outputs are immutable and their seq grows in commit order, so a scan only
 * needs what came after the last one). Answers "is this write superseded by a later recorded
 * one?" for the decision. Built lazily: an interpreter that never meets a file.write never scans.
 */
export class FileWriteIndex {
  private readonly latest = new Map<string, { seq: number; jobId: string }>();
  private lastSeq = 0;
  private lastRecordedAt: number | undefined;

  constructor(private readonly journal: JournalStore) {}

  /**
   * The job ID of the latest output recorded after `seq` that writes the same root and path, or
   * undefined. Journal read errors propagate.
   */
  async supersededBy(seq: number, spec: FileWriteSpec): Promise<string | undefined> {
    await this.refresh();
    const hit = this.latest.get(pathKey(spec.root, spec.path));
    return hit && hit.seq > seq ? hit.jobId : undefined;
  }

  private async refresh(): Promise<void> {
    const outputs: OutputRecord[] =
      this.lastRecordedAt === undefined
        ? await this.journal.outputs.select({ all: true })
        : await this.journal.outputs.select({ since: this.lastRecordedAt - SCAN_SLACK_MS });
    for (const o of outputs) {
      if (o.seq <= this.lastSeq) continue;
      for (const e of o.output.effects) {
        if (e.kind !== "file.write") continue;
        const k = pathKey(e.root, e.path);
        const prev = this.latest.get(k);
        if (!prev || prev.seq < o.seq) this.latest.set(k, { seq: o.seq, jobId: o.jobId });
      }
    }
    for (const o of outputs) {
      if (o.seq > this.lastSeq) this.lastSeq = o.seq;
      if (this.lastRecordedAt === undefined || o.recordedAt > this.lastRecordedAt)
        this.lastRecordedAt = o.recordedAt;
    }
    if (this.lastRecordedAt === undefined) this.lastRecordedAt = 0;
  }
}

function pathKey(root: string, path: string): string {
  return `${root}\0${posix.normalize(path.replace(/\\/g, "/"))}`;
}
