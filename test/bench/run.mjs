// `npm run bench`: runs every test/bench/*.bench.mjs in turn (each prints one JSON object) and
// rewrites BENCHMARKS.md: each figure next to its baseline from the same rounds, the median of the
// per-round ratios with their min and max, the baseline's command, the target, and the machine.
// Environment: BENCH_ONLY=journal,effects runs a subset (the other benches' sections and target
// lines are kept from the page as it was, each section with its own run date); BENCH_QUICK=1 runs small sizes and 2
// rounds to check the benches work and writes nothing (BENCH_OUT=file writes the page there instead
// of BENCHMARKS.md); BENCH_ROUNDS=n counted rounds (default 5); BENCH_KEEP=1 keeps the whole-process
// bench's folder; BENCH_NO_INSTALL=1 never installs hyperfine, BENCH_NO_HYPERFINE=1 never uses it.
// The peers' section of BENCHMARKS.md is `npm run bench:peers`'s (test/bench/peers): kept as it is.
// Final figures want a quiet machine: every ratio is measured in the same rounds, but a busy one
// inflates fsyncs and process starts unevenly between the sides.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { QUICK, ROUNDS } from "./lib/measure.mjs";
import { canDropCaches, processTimer } from "./lib/plain.mjs";
import { benchSections, targetLines } from "./lib/subset.mjs";
import { keepPeersSection } from "./peers/lib/section.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../..");
const out = process.env.BENCH_OUT ?? (QUICK ? undefined : join(root, "BENCHMARKS.md"));
const oldPage = out && existsSync(out) ? readFileSync(out, "utf8") : null;
const only = process.env.BENCH_ONLY?.split(",");
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.mjs"))
  .filter((f) => !only || only.some((o) => f.startsWith(o)))
  .sort();

const version = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { encoding: "utf8" }).trim().split("\n")[0];
  } catch {
    return `${cmd}: not found`;
  }
};
const machine = [
  `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB`,
  `Node ${process.version}`,
  version("git", ["--version"]),
  version("bash", ["--version"]),
  `sqlite3 ${version("sqlite3", ["--version"]).split(" ")[0]}`,
  version("nats-server", ["--version"]),
  `whole processes timed by ${processTimer()}`,
  canDropCaches()
    ? "page cache dropped for the cold rows (root)"
    : "page cache not droppable here (no root): no cold rows",
];

const loadAtStart = loadavg();
const reports = [];
for (const f of files) {
  process.stderr.write(`bench: ${f}\n`);
  // Each bench starts with the page cache written back: the previous one's dirty pages (10,000
  // git objects, a 1M-row journal) would otherwise be flushed inside this one's fsyncs.
  spawnSync("sync");
  const r = spawnSync(process.execPath, [join(here, f)], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) {
    reports.push({ name: f, error: `exit ${r.status}` });
    continue;
  }
  reports.push(JSON.parse(r.stdout.slice(r.stdout.indexOf("{"))));
}

const loads = (l) => l.map((x) => x.toFixed(1)).join(", ");
machine.push(
  `load average (1, 5, 15 min): ${loads(loadAtStart)} at the start, ${loads(loadavg())} at the end (2 cores shared with other work: the ratios within a round are what count)`,
);
const cell = (x) => (x === null || x === undefined ? "" : String(x));
const ratioCell = (x) => (x.ratio === null ? "" : `**${x.ratio}**`);
const rangeCell = (x) => (x.ratio === null ? "" : `${x.ratioMin} – ${x.ratioMax}`);
const targetCell = (x) => {
  if (!x.target) return "";
  if (x.met !== false) return `${x.target}: met`;
  return x.blocked
    ? `${x.target}: **not met** (blocked: see the list at the top)`
    : `${x.target}: **not met**`;
};

const missedRows = reports.flatMap((r) =>
  (r.results ?? []).filter((x) => x.met === false).map((x) => ({ ...x, bench: r.name })),
);
const runAt = new Date().toISOString();
/** With BENCH_ONLY, the benches not run now: their sections and target lines as the page had them. */
const kept = new Map();
if (only && oldPage !== null) {
  const ran = new Set(reports.map((r) => r.name));
  for (const [name, text] of benchSections(oldPage)) if (!ran.has(name)) kept.set(name, text);
}
const keptTargets = oldPage ? targetLines(oldPage, [...kept.keys()]) : { missed: [], blocked: [] };
const missed = [
  ...keptTargets.missed,
  ...missedRows.filter((x) => !x.blocked).map((x) => `${x.bench}: ${x.metric}`),
];
const blocked = [
  ...keptTargets.blocked,
  ...missedRows.filter((x) => x.blocked).map((x) => `${x.bench}: ${x.metric}: ${x.blocked}`),
];
const lines = [
  "# Benchmarks",
  "",
  "Written by `npm run bench` (test/bench/run.mjs). Every idem figure stands next to a baseline",
  "measured in the same rounds on the same machine: the plain tool doing the same work (a bash loop",
  "of git commands, sqlite3, one `git log`), or, where a row says so, idem itself at another size.",
  "The machine drifts by up to 2x within an hour, so the rounds interleave: each round runs every",
  "side once, the order reversed every other round, after an uncounted warm-up round.",
  "",
  "How to read a table:",
  "",
  "- **idem** and **baseline**: each the median of that side's per-round values.",
  "- **ratio**: the median of the per-round ratios idem / baseline (each round's idem figure over",
  "  the same round's baseline); **min – max**: the lowest and highest of those ratios. The ratio is",
  "  not idem / baseline of the two medians, and need not equal it.",
  "- A rate (…/s): a ratio above 1 means idem did more per second. A time (ms, µs, s): a ratio",
  "  below 1 means idem took less time.",
  "- **baseline command**: numbered below each table, as a reader runs it from the repository",
  "  root (REPO, PATCHES and $B are the bench's own folders, described under the table).",
  "",
  `Run: ${runAt}${QUICK ? " (BENCH_QUICK: smoke sizes, figures meaningless)" : ""}${kept.size > 0 ? ` (${reports.map((r) => r.name).join(", ")}; the other sections from earlier runs, each with its date)` : ""}`,
  "",
  ...machine.map((m) => `- ${m}`),
  "",
  missed.length === 0
    ? blocked.length === 0
      ? "Every target is met in this run."
      : "Every target is met in this run except those below, which this machine cannot reach."
    : `Targets not met in this run${kept.size > 0 ? " (or, for a section kept, in its own)" : ""} (idem is to be made faster there, never the baseline slower):\n\n${missed.map((m) => `- ${m}`).join("\n")}`,
  "",
  ...(blocked.length === 0
    ? []
    : [
        "Targets not met that this machine cannot reach (their issues ended blocked; the reason with each):",
        "",
        ...blocked.map((m) => `- ${m}`),
        "",
      ]),
];
const sections = [];
for (const r of reports) {
  const lines = [`## ${r.name}`, "", `Run: ${runAt}`, ""];
  sections.push([r.name, lines]);
  if (r.error) {
    lines.push(`Failed: ${r.error}`, "");
    continue;
  }
  if (r.command) lines.push(`Command: \`${r.command}\``, "");
  const baselines = [];
  const ref = (b) => {
    if (!b) return "";
    let i = baselines.indexOf(b);
    if (i < 0) i = baselines.push(b) - 1;
    return `[${i + 1}]`;
  };
  lines.push(
    "| metric | idem | baseline | unit | ratio | min – max | rounds | baseline command | target |",
    "|---|---:|---:|---|---:|---|---:|---|---|",
  );
  for (const x of r.results) {
    lines.push(
      `| ${x.metric}${x.note ? ` (${x.note})` : ""} | ${cell(x.value)} | ${cell(x.raw)} | ${x.unit} | ${ratioCell(x)} | ${rangeCell(x)} | ${cell(x.rounds)} | ${ref(x.baseline)} | ${targetCell(x)} |`,
    );
  }
  if (baselines.length > 0) {
    lines.push("", "Baseline commands:", "");
    baselines.forEach((b, i) => {
      const code = !b.includes("`") && /^(bash|hyperfine|git) /.test(b);
      lines.push(`${i + 1}. ${code ? `\`${b}\`` : b}`);
    });
  }
  if (r.notes) lines.push("", ...[].concat(r.notes).flatMap((n) => [n, ""]));
  lines.push("");
}
for (const [name, text] of kept) sections.push([name, [text]]);
sections.sort(([a], [b]) => a.localeCompare(b));
for (const [, section] of sections) lines.push(...section);
const page = `${lines.join("\n").replace(/\n{3,}/g, "\n\n")}\n`;
// The peers' section (npm run bench:peers, test/bench/peers) is kept as it is: this bench does not
// run the peers.
if (out) writeFileSync(out, keepPeersSection(oldPage, page));
process.stdout.write(page);
process.stderr.write(
  out ? `bench: wrote ${out} (${ROUNDS} rounds)\n` : "bench: BENCH_QUICK, nothing written\n",
);
