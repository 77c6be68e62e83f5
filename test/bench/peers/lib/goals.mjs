// Issue 49's goals for the peers section: idem on PostgreSQL at least 1.5x and on SQLite at least
// 2.5x every peer at its best (per round the faster of its two settings), whether this run shows
// them, and, where it does not, what the CPU per job says stands between.
import { fmt, median } from "../../lib/measure.mjs";
import { PEER_PAIRS } from "./section.mjs";

export const GOALS = { "idem-sqlite": 2.5, "idem-postgres": 1.5 };

const cpuOf = (runs) => {
  const ms = (runs ?? []).map((r) => r.cpuPerJobMs).filter((v) => typeof v === "number");
  return ms.length ? median(ms) : null;
};

/** The goal lines of the section (empty without the idem rows or the peers' pairs). */
export function goalLines(results) {
  const { rates, labels, details = {} } = results;
  const lines = [];
  for (const [idem, goal] of Object.entries(GOALS)) {
    const mine = rates[idem];
    if (!mine) continue;
    const myCpu = cpuOf(details[idem]);
    for (const [d, t] of PEER_PAIRS) {
      if (!rates[d] || !rates[t]) continue;
      const per = mine
        .map((v, i) => {
          const best = Math.max(rates[d][i] ?? 0, rates[t][i] ?? 0);
          return v === null || best === 0 ? null : v / best;
        })
        .filter((v) => v !== null);
      if (per.length === 0) continue;
      const met = Math.min(...per) >= goal;
      const peerCpu = Math.min(cpuOf(details[d]) ?? Infinity, cpuOf(details[t]) ?? Infinity);
      const cpu =
        myCpu !== null && Number.isFinite(peerCpu)
          ? `; CPU per job ${fmt(myCpu)} ms against its ${fmt(peerCpu)} ms (its / idem's: ${fmt(peerCpu / myCpu)}x), where ${goal}x on a machine whose cores are all busy needs at most ${fmt(peerCpu / goal)} ms`
          : "";
      lines.push(
        `- ${labels[idem]} / ${labels[d]} at its best: ${met ? "**met**" : "**not met**"} (goal ${goal}x; median ${fmt(median(per))}x, lowest round ${fmt(Math.min(...per))}x${cpu}).`,
      );
    }
  }
  if (lines.length === 0) return [];
  return [
    "**Issue 49's goals**, idem on PostgreSQL at least 1.5x and on SQLite at least 2.5x every peer at its best, in every round:",
    "",
    ...lines,
    "",
    "When the machine's cores are busy (the load average below), every system's rate follows its CPU per job: a ratio then tends to the ratio of the CPU per job, and the wall-clock advantage idem has on a quiet machine (its fsyncs and the peers' polls overlap with other work) shrinks. What idem spends per job is in the lines above the table of the peers at their best (by process) and in the whole-process profile of `idem interpreter --once` (BENCHMARKS.md, whole processes).",
    "",
  ];
}
