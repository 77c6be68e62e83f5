// Shared by every bench: interleaved rounds and the statistics each table row reports.
//
// A row compares idem with a baseline (a plain tool doing the same work, or a named reference)
// measured in the same rounds: round r runs every side once, the order alternating between rounds
// (A B, then B A) so that drift and warm caches favour no side, after uncounted warm-up rounds.
// Each round gives one ratio idem/baseline; a row reports the median of those per-round ratios with
// their min and max. Its idem and baseline columns are the medians of each side's per-round values,
// so the ratio need not equal idem/baseline: the table says so in its legend.

/** BENCH_QUICK=1: small sizes and 2 rounds, to check that the benches run (figures mean nothing). */
export const QUICK = process.env.BENCH_QUICK === "1";

/** Rounds after the warm-up: BENCH_ROUNDS, else 5 (2 in quick mode). */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 2 : 5));

/** A size: `full` normally, `quick` with BENCH_QUICK=1; `--name N` on the command line wins. */
export function size(name, full, quick) {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0) return Number(process.argv[i + 1]);
  return QUICK ? quick : full;
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The p-th percentile (nearest rank) of `xs`. */
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

export const perSec = (n, ms) => (n * 1000) / ms;

const log = (m) => process.stderr.write(`${m}\n`);

/**
 * Runs `sides` (name -> async (round) => number) in interleaved rounds: `warmup` uncounted rounds
 * first, then `rounds` counted ones, the order reversed every other round. Answers name -> the
 * counted values in round order.
 */
export async function interleave(label, sides, { rounds = ROUNDS, warmup = 1 } = {}) {
  const names = Object.keys(sides);
  const out = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = -warmup; r < rounds; r++) {
    const order = (r + warmup) % 2 === 0 ? names : [...names].reverse();
    const got = {};
    for (const n of order) got[n] = await sides[n](r);
    if (r >= 0) for (const n of names) out[n].push(got[n]);
    const shown = names.map((n) => `${n} ${shortly(got[n])}`).join(", ");
    log(`${label} ${r < 0 ? "warm-up" : `round ${r + 1}/${rounds}`}: ${shown}`);
  }
  return out;
}

/** A round's value for the progress log: a number, or the p50 of a list of samples. */
function shortly(v) {
  if (typeof v === "number") return fmt(v);
  if (Array.isArray(v)) return `p50 ${fmt(pct(v, 50))}`;
  return Object.entries(v)
    .map(([k, x]) => `${k} ${shortly(x)}`)
    .join(" ");
}

/** A figure with three significant digits (enough for noise of a few percent). */
export function fmt(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return null;
  const a = Math.abs(x);
  const d = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  return Number(x.toFixed(d));
}

/**
 * One table row: idem's per-round values next to the baseline's, the median of the per-round
 * ratios idem/baseline with min and max, and the target when there is one.
 * @param o.metric what is measured
 * @param o.unit of both value columns
 * @param o.idem per-round values of idem
 * @param o.base per-round values of the baseline (same rounds, same order)
 * @param o.baseline how the baseline was produced: the plain-tool command, or what it is
 * @param o.target { min } or { max } on the ratio, with an optional `goal` (a stretch figure)
 *   and an optional `blocked`: why this machine cannot reach it (its issue ended blocked), printed
 *   with the row when it is not met
 * @param o.note anything else a reader needs for this row
 */
export function row({ metric, unit, idem, base, baseline, target, note }) {
  const ratios = idem.map((v, i) => v / base[i]);
  const ratio = median(ratios);
  const met =
    target === undefined
      ? null
      : target.min !== undefined
        ? ratio >= target.min
        : ratio <= target.max;
  return {
    metric,
    unit,
    value: fmt(median(idem)),
    raw: fmt(median(base)),
    ratio: fmt(ratio),
    ratioMin: fmt(Math.min(...ratios)),
    ratioMax: fmt(Math.max(...ratios)),
    rounds: ratios.length,
    perRound: ratios.map(fmt),
    baseline,
    target: target ? targetText(target) : null,
    met,
    blocked: target?.blocked ?? null,
    note: note ?? null,
  };
}

/** A row with no baseline (a latency of idem alone, say). */
export function figure({ metric, unit, values, note }) {
  return {
    metric,
    unit,
    value: fmt(median(values)),
    raw: null,
    ratio: null,
    rounds: values.length,
    baseline: null,
    target: null,
    met: null,
    note: note ?? null,
  };
}

function targetText(t) {
  const main = t.min !== undefined ? `>= ${t.min}x` : `<= ${t.max}x`;
  return t.goal !== undefined ? `${main} (goal ${t.goal}x)` : main;
}

/** Prints a bench's report as the one JSON object run.mjs reads. */
export function report(r) {
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
