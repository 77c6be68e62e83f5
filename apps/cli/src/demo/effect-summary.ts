import { EFFECT_STATES, type EffectState, type JournalStore } from "@idem/journal";
import { table } from "../context.js";

/** What became of each effect of the demo, each counted once. */
export interface EffectSummary {
  /** Effects of every output (each key once). */
  total: number;
  /** How the first generation settled each effect. */
  firstRun: Record<EffectState, number>;
  /** Each effect's final state: its latest generation's row (after the demo's replay). */
  final: Record<EffectState, number>;
}

const zero = (): Record<EffectState, number> =>
  Object.fromEntries(EFFECT_STATES.map((s) => [s, 0])) as Record<EffectState, number>;

/**
 * Counts each effect key once, by the state its first generation left it in and by its final state
 * (latest generation), from the ledger of every output. Read-only.
 */
export async function summarizeEffects(journal: JournalStore): Promise<EffectSummary> {
  const outputs = await journal.outputs.select({ all: true });
  const ledger = await journal.ledger.ofJobs(outputs.map((o) => o.jobId));
  const summary: EffectSummary = { total: 0, firstRun: zero(), final: zero() };
  for (const rows of ledger.values()) {
    if (rows.length === 0) continue;
    const sorted = [...rows].sort((a, b) => a.generation - b.generation);
    summary.total += 1;
    summary.firstRun[(sorted[0] as (typeof sorted)[0]).state] += 1;
    summary.final[(sorted.at(-1) as (typeof sorted)[0]).state] += 1;
  }
  return summary;
}

/** Plain words for each state, as the demo's summary says them. */
const SAID: Record<EffectState, string> = {
  applied: "applied",
  present: "found present at its target: not sent again",
  skipped: "skipped: a later output writes the same file",
  intended: "intended, never settled",
  failed: "failed",
  uncertain: "uncertain: waits for a person",
};

/**
 * The demo's summary for people: each effect once, by how its first run settled it and by its
 * final state after the replay, and what "skipped" means.
 */
export function printEffectSummary(s: EffectSummary): string {
  const rows = (counts: Record<EffectState, number>, always: EffectState[]) =>
    EFFECT_STATES.filter((k) => always.includes(k) || counts[k] > 0).map((k) => [
      SAID[k],
      counts[k],
    ]);
  let out = `each of the ${s.total} effects counted once\n`;
  out += `${table(["the first run", "effects"], rows(s.firstRun, ["applied", "present", "skipped"]))}\n`;
  out += `${table(["after the replay (final state)", "effects"], rows(s.final, ["present", "skipped", "applied"]))}\n`;
  if (s.firstRun.skipped + s.final.skipped > 0) {
    out +=
      "skipped: a file.write whose file a later recorded output also writes (the reporters' outbox/status.md);\n" +
      "  only the last write of a file is sent, so an earlier one is not written again (docs/concepts.md, Deciding an effect)\n";
  }
  if (s.firstRun.present > 0) {
    out +=
      "found present: an interpreter killed after applying it, before recording it; the next one probed and found it\n";
  }
  return out;
}
