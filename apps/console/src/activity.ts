import type { JournalActivity } from "@idem/journal";
import { html } from "hono/html";
import { formatTime, type Html } from "./format.js";
import { ACTIVITY_BUCKET_MS, activityStart, activityUntil } from "./views/read-overview.js";

const MINUTE = ACTIVITY_BUCKET_MS;
/**
 * Minutes read again on every later read: a record or an apply stamped just before a read may
 * commit after it (and another host's clock may run a little behind), so the last two minutes held
 * are not final.
 */
const REREAD_MINUTES = 2;

/**
 * The overview chart's per-minute history, as the journal answers it (`activity()`): the first
 * read takes the whole window (the last hours, from the journal, whenever this console started);
 * each later read asks only from the last minutes held (`nextSince`) and is merged in. So a live
 * poll reads a few minutes of the time indexes, not hours.
 */
export class ActivityHistory {
  /** Counts by the start of their minute. */
  private readonly minutes = new Map<number, { outputs: number; applied: number }>();
  /** The end of the window of the last read merged (exclusive), or null before the first. */
  private readUntil: number | null = null;

  /** Where the next read of the chart's window at `now` should start. */
  nextSince(now: number): number {
    const start = activityStart(now);
    if (this.readUntil === null) return start;
    return Math.max(start, this.readUntil - REREAD_MINUTES * MINUTE);
  }

  /**
   * Merges a read (per minute, its buckets replacing those held) and answers the chart's whole
   * window at `now`: ACTIVITY_HOURS of minutes ending with `now`'s, zero where nothing happened.
   */
  merge(read: JournalActivity, now: number): JournalActivity {
    if (read.bucketMs !== MINUTE || read.since % MINUTE !== 0)
      throw new Error(`activity read per ${read.bucketMs} ms from ${read.since}: not per minute`);
    read.outputs.forEach((outputs, i) => {
      this.minutes.set(read.since + i * MINUTE, { outputs, applied: read.applied[i] ?? 0 });
    });
    this.readUntil = Math.max(this.readUntil ?? 0, read.until);
    const since = activityStart(now);
    const until = activityUntil(now);
    for (const m of this.minutes.keys()) if (m < since) this.minutes.delete(m);
    const outputs: number[] = [];
    const applied: number[] = [];
    for (let m = since; m < until; m += MINUTE) {
      const v = this.minutes.get(m);
      outputs.push(v?.outputs ?? 0);
      applied.push(v?.applied ?? 0);
    }
    return { since, until, bucketMs: MINUTE, outputs, applied };
  }
}

const W = 720;
const H = 200;
const PAD = { l: 40, r: 8, t: 10, b: 24 };

/** `d` of one series' bars: one rectangle per minute that has any. */
function bars(values: readonly number[], max: number, slot: number, offset: number): string {
  const base = (H - PAD.b).toFixed(1);
  const width = Math.max(1, slot / 2 - 0.5).toFixed(1);
  let d = "";
  for (let i = 0; i < values.length; i++) {
    const v = values[i] ?? 0;
    if (v === 0) continue;
    const top = PAD.t + (H - PAD.t - PAD.b) * (1 - v / max);
    const left = PAD.l + i * slot + offset * (slot / 2);
    d += `M${left.toFixed(1)},${base}V${top.toFixed(1)}h${width}V${base}Z`;
  }
  return d;
}

/**
 * The activity per minute as an inline SVG bar chart with a text summary for screen readers; the
 * figure carries its totals (`data-outputs`, `data-applied`) for scripts and tests.
 */
export function activityChart(a: JournalActivity): Html {
  const n = a.outputs.length;
  let max = 1;
  let outputs = 0;
  let applied = 0;
  for (let i = 0; i < n; i++) {
    const o = a.outputs[i] ?? 0;
    const e = a.applied[i] ?? 0;
    outputs += o;
    applied += e;
    max = Math.max(max, o, e);
  }
  const slot = (W - PAD.l - PAD.r) / Math.max(1, n);
  const span = n >= 120 ? `${Math.round(n / 60)} h` : `${n} min`;
  const label = `Outputs recorded and effects applied per minute over the last ${span}: ${outputs} outputs and ${applied} effects in all, at most ${max} in a minute.`;
  return html`<figure class="chart" data-testid="activity" data-outputs="${outputs}" data-applied="${applied}">
<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}">
<line class="axis" x1="${PAD.l}" y1="${H - PAD.b}" x2="${W - PAD.r}" y2="${H - PAD.b}"/>
<line class="axis" x1="${PAD.l}" y1="${PAD.t}" x2="${PAD.l}" y2="${H - PAD.b}"/>
<text x="${PAD.l - 6}" y="${PAD.t + 8}" text-anchor="end">${max}</text>
<text x="${PAD.l - 6}" y="${H - PAD.b}" text-anchor="end">0</text>
<text x="${PAD.l}" y="${H - 6}">${formatTime(a.since).slice(11, 16)}</text>
<text x="${W - PAD.r}" y="${H - 6}" text-anchor="end">now</text>
<path class="outputs" d="${bars(a.outputs, max, slot, 0)}"/>
<path class="applied" d="${bars(a.applied, max, slot, 1)}"/>
</svg>
<figcaption class="legend"><span class="o">■ outputs recorded</span> (left bar) · <span class="a">■ effects applied</span> (right bar) per minute, last ${span}, from the journal: ${outputs} outputs, ${applied} effects</figcaption>
</figure>`;
}
