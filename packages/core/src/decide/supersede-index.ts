import { type KindRegistry, supersedeKeyOf } from "@idem/effects";
import type { JournalStore, OutputRecord } from "@idem/journal";
import type { EffectSpec } from "@idem/schema";

/** How far back in recording time an incremental scan reaches, against clock steps between writers. */
const SCAN_SLACK_MS = 60_000;

/**
 * The latest recorded effect per supersede key (a kind's `supersedeKey`: file.write's root and
 * path), built from the journal's outputs and kept up to date incrementally (outputs are immutable
 * and their seq grows in commit order, so a scan only needs what came after the last one). Answers
 * "is this effect superseded by a later recorded one?" for the decision. Built lazily: an
 * interpreter that never meets a superseding kind never scans.
 */
export class SupersedeIndex {
  private readonly latest = new Map<string, { seq: number; jobId: string }>();
  private lastSeq = 0;
  private lastRecordedAt: number | undefined;

  constructor(
    private readonly journal: JournalStore,
    private readonly kinds: KindRegistry,
  ) {}

  /**
   * The job ID of the latest output recorded after `seq` with an effect of the same kind and
   * supersede key, or undefined (at once for a kind that supersedes nothing). Journal read errors
   * propagate.
   */
  async supersededBy(seq: number, spec: EffectSpec): Promise<string | undefined> {
    const key = supersedeKeyOf(spec, this.kinds);
    if (key === undefined) return undefined;
    await this.refresh();
    const hit = this.latest.get(key);
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
        const k = supersedeKeyOf(e, this.kinds);
        if (k === undefined) continue;
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
