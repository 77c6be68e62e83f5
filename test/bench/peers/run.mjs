// `npm run bench:peers` (issue 35): idem next to the durable-execution engines a user already
// knows, on this machine, in one run, the same workload for every system: N jobs (500), each an
// agent step returning a fixed 1 KB output recorded durably, then one git commit of one file onto
// `main` of a local repository; all jobs handed in at once, 32 in flight. Systems: idem on SQLite
// and on PostgreSQL, DBOS Transact and Restate each with its commit step written with the git
// command and with isomorphic-git, and the plain loop (git command, no engine). Interleaved rounds
// (the order reversed every other round), per-round ratios. Then the crash run: per system, SIGKILLs
// of its worker processes at seeded random moments, then duplicates, missing commits, the final
// state and the time from the last kill until every job has settled. Writes its section of
// BENCHMARKS.md (npm run bench keeps it) and prints the results as JSON on stdout.
//
// Usage: node test/bench/peers/run.mjs [--jobs 500] [--rounds 4] [--kills 10] [--seed S]
//   [--only idem-sqlite,dbos-git,...] [--skip-crash] [--skip-throughput] [--concurrency 32]
//   [--stall-s 120] [--idem-stall-s 360] [--out FILE | --no-write] [--no-install] [--json FILE]
//   [--keep] [--from-json FILE (writes the section again from a --json file, runs nothing)]
//   [--idem-lease-ms MS (queue.ackWaitMs and interpreter.leaseMs; idem's defaults without)]
// The peers are installed into test/bench/peers/node_modules (npm ci) when missing, unless
// --no-install. PostgreSQL: a disposable server of the bench's own (packages/testing), fsync on.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { postgresBinDir, startPostgres } from "@idem/testing";
import { rng } from "../../chaos/lib/drill-kit.mjs";
import { interleave } from "../lib/measure.mjs";
import { ROOT } from "../lib/plain.mjs";
import { installPeers, peersInstalled } from "./lib/install.mjs";
import { children, kill } from "./lib/procs.mjs";
import { section } from "./lib/report.mjs";
import { crashRun, throughputRun } from "./lib/runs.mjs";
import { withPeersSection } from "./lib/section.mjs";
import { dbosSystem } from "./systems/dbos.mjs";
import { IDEM_SETTINGS, idemSystem } from "./systems/idem.mjs";
import { plainSystem } from "./systems/plain.mjs";
import { RESTATE_BIN, restateSystem } from "./systems/restate.mjs";

const { values: opt } = parseArgs({
  options: {
    jobs: { type: "string", default: "500" },
    rounds: { type: "string", default: process.env.BENCH_ROUNDS ?? "4" },
    kills: { type: "string", default: "10" },
    seed: { type: "string" },
    only: { type: "string" },
    concurrency: { type: "string", default: "32" },
    "stall-s": { type: "string", default: "120" },
    "idem-stall-s": { type: "string", default: "360" },
    "idem-lease-ms": { type: "string" },
    "dbos-poll-ms": { type: "string", default: "50" },
    "restate-partitions": { type: "string", default: "1" },
    crash: { type: "string" },
    "skip-crash": { type: "boolean", default: false },
    "skip-throughput": { type: "boolean", default: false },
    out: { type: "string", default: join(ROOT, "BENCHMARKS.md") },
    "no-write": { type: "boolean", default: false },
    "no-install": { type: "boolean", default: false },
    json: { type: "string" },
    "from-json": { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
const N = Number(opt.jobs);
const ROUNDS = Number(opt.rounds);
const KILLS = Number(opt.kills);
const SEED = Number(opt.seed ?? Math.floor(Math.random() * 2 ** 31));
const CONCURRENCY = Number(opt.concurrency);
const LEASE_MS = opt["idem-lease-ms"] === undefined ? undefined : Number(opt["idem-lease-ms"]);
/** The peers' tuned settings (each beside its default): DBOS's queue polling, Restate's invoker. */
const TUNED = {
  dbosPollMs: Number(opt["dbos-poll-ms"]),
  restateInvoker: { partitions: Number(opt["restate-partitions"]), limit: CONCURRENCY },
};
const log = (m) => process.stderr.write(`peers: ${m}\n`);

const ALL = [
  "idem-sqlite",
  "idem-postgres",
  "idem-sqlite-command",
  "dbos-git",
  "dbos-git-tuned",
  "dbos-iso",
  "dbos-iso-tuned",
  "restate-git",
  "restate-git-tuned",
  "restate-iso",
  "restate-iso-tuned",
  "plain",
];
const sides = opt.only ? opt.only.split(",") : ALL;
for (const s of sides) if (!ALL.includes(s)) throw new Error(`--only: unknown system ${s}`);
/** The crash run: idem and each peer at its tuned setting (the crash path does not depend on it). */
const CRASH_DEFAULT = ["idem-sqlite", "idem-postgres", ...ALL.filter((s) => s.endsWith("-tuned"))];
const crashSides = (opt.crash ? opt.crash.split(",") : CRASH_DEFAULT).filter((s) =>
  sides.includes(s),
);

const STARTED = new Date().toISOString();
// The commit the run builds and measures (a commit made while it runs is not in its figures).
const REV = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
  cwd: ROOT,
  encoding: "utf8",
}).trim();
if (opt["from-json"]) {
  writeSection(JSON.parse(readFileSync(opt["from-json"], "utf8")));
  process.exit(0);
}

let installed = peersInstalled();
if (installed.reason && !opt["no-install"]) {
  installPeers();
  installed = peersInstalled();
}
if (installed.reason) throw new Error(`the peers cannot run here: ${installed.reason}`);

const B = mkdtempSync(join(tmpdir(), "idem-peers-bench-"));
const logFile = join(B, "processes.log");
log(`seed ${SEED}, ${N} jobs, ${ROUNDS} rounds, ${KILLS} kills; folder ${B} (log ${logFile})`);
const pg = await startPostgres();
let dbs = 0;
/** A fresh database on the bench's server for one run. */
const database = (tag) => pg.createDatabase(`${tag.replace(/-/g, "_")}_${++dbs}`);
const pgPid = () => pg.pid;
const dbos = async (dir, random, commit, pollMs) =>
  dbosSystem({
    dir,
    commit,
    pgUrl: await database("dbos"),
    concurrency: CONCURRENCY,
    logFile,
    random,
    pollMs,
    pgPid,
  });
const restate = (dir, random, commit, invoker) =>
  restateSystem({ dir, commit, concurrency: CONCURRENCY, logFile, random, invoker });

/** name -> (run folder, random) -> a system */
const make = {
  "idem-sqlite": async (dir, random) =>
    idemSystem({ dir, journal: "sqlite", logFile, random, leaseMs: LEASE_MS }),
  "idem-postgres": async (dir, random) =>
    idemSystem({
      dir,
      journal: "postgres",
      pgUrl: await database("idem"),
      logFile,
      random,
      leaseMs: LEASE_MS,
      pgPid,
    }),
  "idem-sqlite-command": async (dir, random) =>
    idemSystem({ dir, journal: "sqlite", logFile, random, leaseMs: LEASE_MS, agent: "command" }),
  "dbos-git": (dir, random) => dbos(dir, random, "git"),
  "dbos-git-tuned": (dir, random) => dbos(dir, random, "git", TUNED.dbosPollMs),
  "dbos-iso": (dir, random) => dbos(dir, random, "isomorphic-git"),
  "dbos-iso-tuned": (dir, random) => dbos(dir, random, "isomorphic-git", TUNED.dbosPollMs),
  "restate-git": async (dir, random) => restate(dir, random, "git"),
  "restate-git-tuned": async (dir, random) => restate(dir, random, "git", TUNED.restateInvoker),
  "restate-iso": async (dir, random) => restate(dir, random, "isomorphic-git"),
  "restate-iso-tuned": async (dir, random) =>
    restate(dir, random, "isomorphic-git", TUNED.restateInvoker),
  plain: async (dir) => plainSystem({ dir, logFile }),
};
let runs = 0;
const runDir = (name) => {
  const d = join(B, `${String(++runs).padStart(3, "0")}-${name}`);
  mkdirSync(d);
  return d;
};

const labels = {};
/** The 1-minute load average as each throughput run starts (the machine is shared). */
const loadAverages = [];
const details = Object.fromEntries(sides.map((s) => [s, []]));
let rates = {};
try {
  if (!opt["skip-throughput"]) {
    const random = rng(SEED);
    rates = await interleave(
      "peers",
      Object.fromEntries(
        sides.map((name) => [
          name,
          async () => {
            loadAverages.push(loadavg()[0]);
            const sys = await make[name](runDir(name), random);
            labels[name] = sys.label;
            const r = await throughputRun(sys, { n: N });
            details[name].push(r);
            if (r.error) log(`${sys.label}: ${r.error}`);
            return r.rate ?? Number.NaN; // measure.mjs prints NaN as null
          },
        ]),
      ),
      { rounds: ROUNDS, warmup: 0 },
    );
    for (const k of Object.keys(rates))
      rates[k] = rates[k].map((v) => (Number.isNaN(v) ? null : v));
  }
  const crash = {};
  if (!opt["skip-crash"]) {
    for (const name of crashSides) {
      const random = rng(SEED + crashSeedOffset(name));
      const sys = await make[name](runDir(`crash-${name}`), random);
      labels[name] = sys.label;
      const stallMs = 1000 * Number(name.startsWith("idem") ? opt["idem-stall-s"] : opt["stall-s"]);
      log(`crash run: ${sys.label} (${KILLS} kills)`);
      crash[name] = await crashRun(sys, { n: N, kills: KILLS, random, stallMs });
      log(`crash run: ${sys.label}: ${JSON.stringify(summary(crash[name]))}`);
    }
  }
  const results = {
    date: STARTED,
    rev: REV,
    seed: SEED,
    jobs: N,
    rounds: ROUNDS,
    kills: KILLS,
    concurrency: CONCURRENCY,
    stall: `${opt["idem-stall-s"]} s for idem, ${opt["stall-s"]} s for the peers`,
    idem: { ...IDEM_SETTINGS, leaseMs: LEASE_MS ?? null },
    tuned: TUNED,
    load: loadAverages,
    versions: installed.versions,
    labels,
    rates,
    details,
    crash,
  };
  if (opt.json) writeFileSync(opt.json, `${JSON.stringify(results, null, 2)}\n`);
  writeSection(results);
} finally {
  // A process a system left behind (a child of a stopped one) must not outlive the folder its
  // output goes to.
  await Promise.all([...children].map((c) => kill(c)));
  await pg.stop();
  if (opt.keep) log(`kept ${B}`);
  else rmSync(B, { recursive: true, force: true });
}

/** Each system's crash run draws from its own stream of the seed, whatever else runs. */
function crashSeedOffset(name) {
  return 1 + ALL.indexOf(name) * 7919;
}

function summary(r) {
  if (r.error) return { error: r.error };
  return {
    kills: r.kills,
    duplicates: r.audit.duplicates.length,
    missing: r.audit.missing.length,
    foreign: r.audit.foreign.length,
    fsck: r.audit.fsck,
    state: r.state.detail,
    recoverySeconds: r.recoverySeconds,
  };
}

function machine() {
  const v = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8" }).trim().split("\n")[0];
    } catch {
      return `${cmd}: not found`;
    }
  };
  return {
    cpus: `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: process.version,
    git: v("git", ["--version"]),
    postgres: v(join(postgresBinDir() ?? "/usr/bin", "postgres"), ["--version"]),
    restate: v(RESTATE_BIN, ["--version"]),
  };
}

/** Renders the section, writes it into BENCHMARKS.md (unless --no-write) and prints it. */
function writeSection(results) {
  const text = section(results, machine());
  if (!opt["no-write"]) {
    const page = existsSync(opt.out) ? readFileSync(opt.out, "utf8") : "# Benchmarks\n";
    writeFileSync(opt.out, withPeersSection(page, text));
    log(`wrote the peers section of ${opt.out}`);
  }
  process.stdout.write(`${text}\n`);
}
