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

/**
 * The throughput table: each system's median jobs/s and its rounds, idem SQLite / it and idem
 * PostgreSQL / it per round (the median of the per-round ratios, each round's ratio in brackets).
 */
export function throughputTable(rates, labels, inflight) {
  const lines = [
    "| system | jobs/s (median) | jobs/s per round | idem SQLite / it, per round | idem PostgreSQL / it, per round | most in flight |",
    "|---|---:|---|---|---|---:|",
  ];
  const sqlite = rates["idem-sqlite"];
  const pg = rates["idem-postgres"];
  for (const [name, values] of Object.entries(rates)) {
    const ok = values.filter((v) => v !== null);
    const vsSqlite = sqlite && name !== "idem-sqlite" ? ratioCell(ratios(sqlite, values)) : "–";
    const vsPg = pg && !name.startsWith("idem-") ? ratioCell(ratios(pg, values)) : "–";
    lines.push(
      `| ${labels[name]} | ${ok.length ? fmt(median(ok)) : "failed"} | ${list(values)} | ${vsSqlite} | ${vsPg} | ${inflight[name] ?? "–"} |`,
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
