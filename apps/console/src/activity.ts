import type { JournalStatus } from "@idem/journal";
import { html } from "hono/html";
import { formatTime, type Html } from "./format.js";

const MINUTE = 60_000;

/** One reading of the journal's totals. */
interface Sample {
  at: number;
  outputs: number;
  applied: number;
}

/** Outputs recorded and effects applied in each minute of a window; null where nothing was read. */
export interface ActivitySeries {
  /** Start of the first minute. */
  start: number;
  outputs: (number | null)[];
  applied: (number | null)[];
  /** When the first reading was taken: the series knows nothing before it. */
  since: number | null;
}

/**
 * The per-minute activity of the overview's chart, from the totals `status()` already answers
 * (outputs, effects applied): the console reads them on a timer and on every overview, and each
 * minute's figure is the difference between the last readings at its two ends. So the chart costs
 * no query of its own; it knows the time since this console started (its memory, `hours` long).
 */
export class ActivitySampler {
  private readonly samples: Sample[] = [];

  constructor(private readonly hours = 3) {}

  record(at: number, status: Pick<JournalStatus, "outputs" | "effects">): void {
    const s = { at, outputs: status.outputs, applied: status.effects.applied };
    const last = this.samples[this.samples.length - 1];
    if (last && at < last.at) return;
    this.samples.push(s);
    const keep = at - this.hours * 60 * MINUTE - 2 * MINUTE;
    while (this.samples.length > 2 && (this.samples[0] as Sample).at < keep) this.samples.shift();
  }

  /**
   * The last `minutes` whole minutes up to `now`'s, per minute. By default the time this console
   * has read, at least one hour and at most its memory (`hours`).
   */
  series(now: number, minutes?: number): ActivitySeries {
    if (minutes === undefined) {
      const first = this.samples[0]?.at ?? now;
      const known = Math.ceil((now - first) / MINUTE) + 1;
      minutes = Math.min(this.hours * 60, Math.max(60, known));
    }
    const end = Math.floor(now / MINUTE) * MINUTE + MINUTE;
    const start = end - minutes * MINUTE;
    const outputs: (number | null)[] = [];
    const applied: (number | null)[] = [];
    for (let i = 0; i < minutes; i++) {
      const a = this.at(start + i * MINUTE);
      const b = this.at(start + (i + 1) * MINUTE);
      if (!a || !b) {
        // Nothing read before the minute started: only a reading inside it says anything.
        const first = this.samples[0];
        if (!a && b && first && first.at < start + (i + 1) * MINUTE) {
          outputs.push(Math.max(0, b.outputs - first.outputs));
          applied.push(Math.max(0, b.applied - first.applied));
        } else {
          outputs.push(null);
          applied.push(null);
        }
        continue;
      }
      outputs.push(Math.max(0, b.outputs - a.outputs));
      applied.push(Math.max(0, b.applied - a.applied));
    }
    return { start, outputs, applied, since: this.samples[0]?.at ?? null };
  }

  /** The last reading at or before `t`. */
  private at(t: number): Sample | undefined {
    let found: Sample | undefined;
    for (const s of this.samples) {
      if (s.at > t) break;
      found = s;
    }
    return found;
  }
}

const W = 720;
const H = 200;
const PAD = { l: 40, r: 8, t: 10, b: 24 };

/** The series as an inline SVG line chart with a text summary for screen readers. */
export function activityChart(series: ActivitySeries): Html {
  const n = series.outputs.length;
  const values = [...series.outputs, ...series.applied].filter((v): v is number => v !== null);
  const max = Math.max(1, ...values);
  const y = (v: number) => PAD.t + (H - PAD.t - PAD.b) * (1 - v / max);
  const slot = (W - PAD.l - PAD.r) / Math.max(1, n);
  const bars = (vs: (number | null)[], offset: number) =>
    vs
      .map((v, i) => {
        if (v === null || v === 0) return "";
        const top = y(v);
        const left = PAD.l + i * slot + offset * (slot / 2);
        return `M${left.toFixed(1)},${(H - PAD.b).toFixed(1)}V${top.toFixed(1)}h${Math.max(1, slot / 2 - 0.5).toFixed(1)}V${(H - PAD.b).toFixed(1)}Z`;
      })
      .join("");
  const sum = (vs: (number | null)[]) => vs.reduce<number>((a, v) => a + (v ?? 0), 0);
  const span = n >= 120 ? `${Math.round(n / 60)} h` : `${n} min`;
  const label = `Outputs recorded and effects applied per minute over the last ${span}: ${sum(series.outputs)} outputs and ${sum(series.applied)} effects in all, at most ${max} in a minute.`;
  return html`<figure class="chart" data-testid="activity">
<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}">
<line class="axis" x1="${PAD.l}" y1="${H - PAD.b}" x2="${W - PAD.r}" y2="${H - PAD.b}"/>
<line class="axis" x1="${PAD.l}" y1="${PAD.t}" x2="${PAD.l}" y2="${H - PAD.b}"/>
<text x="${PAD.l - 6}" y="${PAD.t + 8}" text-anchor="end">${max}</text>
<text x="${PAD.l - 6}" y="${H - PAD.b}" text-anchor="end">0</text>
<text x="${PAD.l}" y="${H - 6}">${formatTime(series.start).slice(11, 16)}</text>
<text x="${W - PAD.r}" y="${H - 6}" text-anchor="end">now</text>
<path class="outputs" d="${bars(series.outputs, 0)}"/>
<path class="applied" d="${bars(series.applied, 1)}"/>
</svg>
<figcaption class="legend"><span class="o">■ outputs recorded</span> (left bar) · <span class="a">■ effects applied</span> (right bar) per minute, last ${span}${
    series.since !== null ? html` (read by this console since ${formatTime(series.since)})` : ""
  }</figcaption>
</figure>`;
}
