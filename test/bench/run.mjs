// `npm run bench`: runs every test/bench/*.bench.mjs in turn (each prints one JSON object) and
// rewrites BENCHMARKS.md: each figure next to its raw counterpart from the same run, the ratio, the
// target and the machine. BENCH_ONLY=journal,effects runs a subset.
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../..");
const only = process.env.BENCH_ONLY?.split(",");
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.mjs"))
  .filter((f) => !only || only.some((o) => f.startsWith(o)))
  .sort();

const version = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { encoding: "utf8" }).trim().split("\n")[0];
  } catch {
    return "not found";
  }
};
const machine = [
  `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB`,
  `Node ${process.version}`,
  version("git", ["--version"]),
  version("nats-server", ["--version"]),
];

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
  });
  if (r.status !== 0) {
    reports.push({ name: f, error: `exit ${r.status}` });
    continue;
  }
  const start = r.stdout.indexOf("{");
  reports.push(JSON.parse(r.stdout.slice(start)));
}

const lines = [
  "# Benchmarks",
  "",
  "Written by `npm run bench` (test/bench/run.mjs). Each figure stands next to the raw operation",
  "measured in the same run on the same machine, because this machine drifts by up to 2x within an",
  "hour (see shared/LIMITS.md). Ratios compare like with like: latency ratios above 1 are slower than",
  "raw, throughput ratios below 1 are slower than raw.",
  "",
  `Run: ${new Date().toISOString()}`,
  "",
  ...machine.map((m) => `- ${m}`),
  "",
];
for (const r of reports) {
  lines.push(`## ${r.name}`, "");
  if (r.error) {
    lines.push(`Failed: ${r.error}`, "");
    continue;
  }
  if (r.command) lines.push(`Command: \`${r.command}\``, "");
  lines.push("| metric | idem | raw | unit | ratio | target |", "|---|---:|---:|---|---:|---|");
  for (const x of r.results) {
    lines.push(
      `| ${x.metric} | ${x.value} | ${x.raw ?? ""} | ${x.unit} | ${x.ratio ?? ""} | ${x.target ?? ""} |`,
    );
  }
  if (r.notes) lines.push("", ...[].concat(r.notes));
  lines.push("");
}
writeFileSync(join(root, "BENCHMARKS.md"), `${lines.join("\n")}\n`);
process.stdout.write(`${lines.join("\n")}\n`);
