// The peers' section of BENCHMARKS.md: written by `npm run bench:peers` between two markers, kept
// as it is by `npm run bench` (test/bench/run.mjs rewrites the rest of the page around it).
import { fmt, median } from "../../lib/measure.mjs";

export const BEGIN =
  "<!-- peers:begin (written by npm run bench:peers; npm run bench keeps it) -->";
export const END = "<!-- peers:end -->";

/** The section of `page` between the markers (both included), or null. */
export function peersSection(page) {
  const b = page.indexOf(BEGIN);
  const e = page.indexOf(END);
  if (b < 0 || e < b) return null;
  return page.slice(b, e + END.length);
}

/** `page` with its peers section replaced by `section` (appended when it has none). */
export function withPeersSection(page, section) {
  const old = peersSection(page);
  if (old !== null) return page.replace(old, section);
  return `${page.replace(/\n*$/, "\n")}\n${section}\n`;
}

/** For run.mjs: the new page keeps the old page's peers section, if it had one. */
export function keepPeersSection(oldPage, newPage) {
  const section = oldPage === null ? null : peersSection(oldPage);
  return section === null ? newPage : withPeersSection(newPage, section);
}

const x = (v) => (v === null || v === undefined ? "–" : `${fmt(v)}x`);
const list = (vs, f = fmt) => vs.map((v) => (v === null ? "failed" : f(v))).join(", ");

/** Per-round ratios a/b (null where either side failed), their median and range. */
function ratios(a, b) {
  const per = a.map((v, i) => (v === null || b[i] === null ? null : v / b[i]));
  const ok = per.filter((v) => v !== null);
  return {
    per,
    median: ok.length ? median(ok) : null,
    min: ok.length ? Math.min(...ok) : null,
    max: ok.length ? Math.max(...ok) : null,
  };
}

const ratioCell = (r) =>
  r.median === null ? "–" : `**${x(r.median)}** (${list(r.per, (v) => fmt(v))})`;

/** The median CPU per job (ms) of a system's runs, or "–". */
const cpuCell = (runs) => {
  const ms = (runs ?? []).map((r) => r.cpuPerJobMs).filter((v) => typeof v === "number");
  return ms.length ? `${fmt(median(ms))} (${list(ms)})` : "–";
};

/**
 * The throughput table: each system's median jobs/s and its rounds, idem SQLite / it and idem
 * PostgreSQL / it per round (the median of the per-round ratios, each round's ratio in brackets),
 * and its CPU per job.
 */
export function throughputTable(rates, labels, inflight, details = {}) {
  const lines = [
    "| system | jobs/s (median) | jobs/s per round | idem SQLite / it, per round | idem PostgreSQL / it, per round | CPU ms per job (median; per round) | most in flight |",
    "|---|---:|---|---|---|---|---:|",
  ];
  const sqlite = rates["idem-sqlite"];
  const pg = rates["idem-postgres"];
  for (const [name, values] of Object.entries(rates)) {
    const ok = values.filter((v) => v !== null);
    const vsSqlite = sqlite && name !== "idem-sqlite" ? ratioCell(ratios(sqlite, values)) : "–";
    const vsPg = pg && !name.startsWith("idem-") ? ratioCell(ratios(pg, values)) : "–";
    lines.push(
      `| ${labels[name]} | ${ok.length ? fmt(median(ok)) : "failed"} | ${list(values)} | ${vsSqlite} | ${vsPg} | ${cpuCell(details[name])} | ${inflight[name] ?? "–"} |`,
    );
  }
  return lines;
}

/** Each peer's two settings, by the name of its default: [default, tuned, what the tuned is]. */
export const PEER_PAIRS = [
  ["dbos-git", "dbos-git-tuned"],
  ["dbos-iso", "dbos-iso-tuned"],
  ["restate-git", "restate-git-tuned"],
  ["restate-iso", "restate-iso-tuned"],
];

/**
 * Each peer at its best: per round the faster of its two settings (which one in brackets), and idem
 * SQLite and PostgreSQL over that figure per round, with both sides' CPU per job.
 */
export function bestTable(rates, labels, details = {}) {
  const lines = [
    "| peer at its best (per round the faster of its default and its tuned setting) | jobs/s per round (the setting: d default, t tuned) | idem SQLite / it, per round | idem PostgreSQL / it, per round | its CPU ms per job, tuned (median) |",
    "|---|---|---|---|---:|",
  ];
  const sqlite = rates["idem-sqlite"];
  const pg = rates["idem-postgres"];
  for (const [d, t] of PEER_PAIRS) {
    if (!rates[d] || !rates[t]) continue;
    const best = rates[d].map((v, i) => {
      const u = rates[t][i];
      if (v === null && u === null) return { v: null, which: "" };
      if (u === null || (v !== null && v > u)) return { v, which: "d" };
      return { v: u, which: "t" };
    });
    const values = best.map((b) => b.v);
    const shown = best.map((b) => (b.v === null ? "failed" : `${fmt(b.v)} ${b.which}`)).join(", ");
    const vsSqlite = sqlite ? ratioCell(ratios(sqlite, values)) : "–";
    const vsPg = pg ? ratioCell(ratios(pg, values)) : "–";
    lines.push(
      `| ${labels[d]} / ${labels[t].slice(labels[d].length + 2)} | ${shown} | ${vsSqlite} | ${vsPg} | ${cpuCell(details[t]).split(" (")[0]} |`,
    );
  }
  return lines;
}

const ids = (xs) =>
  xs.length === 0
    ? "0"
    : `${xs.length} (${xs.slice(0, 3).join(", ")}${xs.length > 3 ? ", …" : ""})`;

/** The crash table: per system what the repository holds and what the system says. */
export function crashTable(results, labels) {
  const lines = [
    "| system | kills | restarts | commits | duplicated jobs | missing jobs | commits holding another job's file | repository | system's final state | last kill → all settled | submission → all settled |",
    "|---|---:|---:|---:|---|---|---|---|---|---:|---:|",
  ];
  for (const [name, r] of Object.entries(results)) {
    if (r.error) {
      lines.push(
        `| ${labels[name]} | ${r.kills ?? "–"} | | | | | | | run failed: ${r.error} | | |`,
      );
      continue;
    }
    const repo = [r.audit.fsck, r.audit.lock ? ".git/index.lock left behind" : null]
      .filter(Boolean)
      .join("; ");
    const never = `not settled (nothing moved for ${r.stallSeconds} s)`;
    lines.push(
      `| ${labels[name]} | ${r.kills} | ${r.restarts ?? "–"} | ${r.audit.commits} | ${ids(r.audit.duplicates)} | ${ids(r.audit.missing)} | ${ids(r.audit.foreign)} | ${repo} | ${r.state.detail.replaceAll("|", "/")} | ${r.recoverySeconds === null ? never : `${fmt(r.recoverySeconds)} s`} | ${r.totalSeconds === null ? "–" : `${fmt(r.totalSeconds)} s`} |`,
    );
  }
  return lines;
}
