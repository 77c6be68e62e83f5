// Scaling (issue 49): the peers bench's workload (each job an agent step returning a fixed 1 KB
// output, recorded, then one git commit of jobs/<job ID>.txt) spread over 16 repositories (job i
// commits to r<i mod 16>), on a PostgreSQL journal (a disposable server of the bench's own), with 1,
// 2 and 4 `idem interpreter` processes (--concurrency 4 each) and 1 and 2 executors (the peers
// bench's in-process agent, test/bench/peers/systems/idem-executor.mjs); every job handed in at once
// with one `idem enqueue FILE --concurrency 32`, timed until every job's file is committed. Beside it
// the machine's raw limit: 4 plain loops of `git add` + `git commit` at once, each on 4 of the 16
// repositories, and 1 such loop on all 16. Interleaved rounds. Prints one JSON object.
// Usage: npm run build && node test/bench/scaling.bench.mjs [--n 320] (BENCH_ROUNDS, default 3 here)
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres } from "@idem/testing";
import pgDriver from "pg";
import { figure, fmt, interleave, median, report, row, size } from "./lib/measure.mjs";
import { ROOT, script } from "./lib/plain.mjs";
import { runCounted, treeCpuSeconds } from "./peers/lib/cpu.mjs";
import { GIT_ENV, jobIds, OUTPUT, repoOf, seedRepo } from "./peers/lib/workload.mjs";

const N = size("n", 320, 48);
const REPOS = 16;
const PER_PROCESS = 4;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IDEM = join(ROOT, "apps/cli/bin/idem.js");
const EXECUTOR = join(ROOT, "test/bench/peers/systems/idem-executor.mjs");
const LOOP = join(ROOT, "test/bench/plain/git-commit-repos.sh");
const B = mkdtempSync(join(tmpdir(), "idem-scaling-bench-"));
const log = (m) => process.stderr.write(`scaling: ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const env = { ...process.env, ...GIT_ENV, NO_COLOR: "1", IDEM_LOG_LEVEL: "warn" };
const live = new Set();
let runs = 0;
/** CPU ms per job of each idem run (its processes and the PostgreSQL server), by configuration. */
const cpuPerJob = {};
/** The journal's work per job in each idem run: transactions committed, WAL bytes, WAL fsyncs. */
const journalPerJob = { xacts: [], walBytes: [], walSyncs: [] };

/** The server's counters: the database's committed transactions, the cluster's WAL. */
async function serverCounters(url, db) {
  const c = new pgDriver.Client({ connectionString: url });
  await c.connect();
  try {
    const x = await c.query("SELECT xact_commit FROM pg_stat_database WHERE datname = $1", [db]);
    const w = await c.query("SELECT wal_bytes, wal_sync FROM pg_stat_wal");
    return {
      xacts: Number(x.rows[0].xact_commit),
      walBytes: Number(w.rows[0].wal_bytes),
      walSyncs: Number(w.rows[0].wal_sync),
    };
  } finally {
    await c.end();
  }
}

/** A fresh folder with 16 seeded repositories r00…r15 under repos/. */
function folderWithRepos(tag) {
  const dir = join(B, `${String(++runs).padStart(3, "0")}-${tag}`);
  for (let r = 0; r < REPOS; r++) seedRepo(join(dir, "repos", repoOf(r, REPOS)));
  return dir;
}

const committedFiles = (dir) =>
  Array.from({ length: REPOS }, (_, r) =>
    readdirSync(join(dir, "repos", repoOf(r, REPOS), "jobs")),
  ).reduce((n, files) => n + files.length, 0);

const commitsOnMain = (dir) =>
  Array.from({ length: REPOS }, (_, r) =>
    Number(
      execFileSync("git", ["rev-list", "--count", "main"], {
        cwd: join(dir, "repos", repoOf(r, REPOS)),
        encoding: "utf8",
      }),
    ),
  ).reduce((a, b) => a + b, 0);

function startProcess(argv, cwd, extraEnv = {}) {
  const child = spawn(process.execPath, argv, {
    cwd,
    env: { ...env, ...extraEnv },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d) => {
    err = (err + d).slice(-2000);
  });
  child.exited = new Promise((r) => child.once("exit", r));
  child.lastError = () => err;
  live.add(child);
  void child.exited.then(() => live.delete(child));
  return child;
}

async function stopAll(children) {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  const t = setTimeout(() => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  }, 5000);
  await Promise.all(children.map((c) => c.exited));
  clearTimeout(t);
}

/** Waits until `want` job files are committed in `dir`'s repositories (polled every 100 ms). */
async function waitForFiles(dir, want, what, procs) {
  const t0 = Date.now();
  let seen = -1;
  let seenAt = Date.now();
  for (;;) {
    const n = committedFiles(dir);
    if (n >= want) return;
    const gone = procs.find((p) => p.exitCode !== null);
    if (gone) throw new Error(`${what}: a process exited (${gone.lastError().slice(-400)})`);
    if (n !== seen) [seen, seenAt] = [n, Date.now()];
    else if (Date.now() - seenAt > 120_000)
      throw new Error(`${what}: stuck at ${n}/${want} after ${(Date.now() - t0) / 1000} s`);
    await sleep(100);
  }
}

let pg;
let dbs = 0;
let lastRates;

/** One timed run of idem with `interpreters` interpreter processes and `executors` executors. */
async function idemRun(interpreters, executors) {
  const dir = folderWithRepos(`idem-i${interpreters}-e${executors}`);
  const configFile = join(dir, "idem.config.json");
  const repos = Object.fromEntries(
    Array.from({ length: REPOS }, (_, r) => [
      repoOf(r, REPOS),
      { path: `repos/${repoOf(r, REPOS)}` },
    ]),
  );
  const db = `scaling_${++dbs}`;
  const config = {
    journal: { url: await pg.createDatabase(db) },
    repos,
    agents: { writer: { command: ["true"], timeoutMs: 60_000 } },
    queue: { maxAckPending: 16 },
  };
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  execFileSync(process.execPath, [IDEM, "init", "--journal", "--config", configFile], {
    cwd: dir,
    env,
    stdio: "ignore",
  });
  const procs = [
    ...Array.from({ length: executors }, () =>
      startProcess([EXECUTOR, "--config", configFile], dir, { IDEM_BENCH_REPOS: String(REPOS) }),
    ),
    ...Array.from({ length: interpreters }, () =>
      startProcess(
        [IDEM, "interpreter", "--concurrency", String(PER_PROCESS), "--config", configFile],
        dir,
      ),
    ),
  ];
  const enqueue = async (ids, tag) => {
    const file = join(dir, `jobs-${tag}.jsonl`);
    writeFileSync(
      file,
      `${ids.map((jobId) => JSON.stringify({ jobId, agent: "writer", input: {} })).join("\n")}\n`,
    );
    const r = await runCounted(
      [process.execPath, IDEM, "enqueue", file, "--concurrency", "32", "--config", configFile],
      { cwd: dir, env },
    );
    if (r.code !== 0) throw new Error(`idem enqueue exited ${r.code}: ${r.stderr.slice(0, 400)}`);
    return r.cpuSeconds ?? 0;
  };
  try {
    // Warm-up, untimed: one job per repository (processes up, every repository opened once).
    await enqueue(jobIds(REPOS, "warm"), "warm");
    await waitForFiles(dir, REPOS, "warm-up", procs);
    const cpu = () => treeCpuSeconds([...procs.map((p) => p.pid), pg.pid]);
    const counters0 = await serverCounters(pg.url, db);
    const cpu0 = cpu();
    const t0 = performance.now();
    const enqueueCpu = await enqueue(jobIds(N), "timed");
    await waitForFiles(dir, REPOS + N, `idem i${interpreters} e${executors}`, procs);
    const seconds = (performance.now() - t0) / 1000;
    const key = `i${interpreters}e${executors}`;
    cpuPerJob[key] = [...(cpuPerJob[key] ?? []), (1000 * (cpu() - cpu0 + enqueueCpu)) / N];
    const counters1 = await serverCounters(pg.url, db);
    for (const k of Object.keys(journalPerJob))
      journalPerJob[k].push((counters1[k] - counters0[k]) / N);
    const commits = commitsOnMain(dir);
    if (commits !== 2 * REPOS + N)
      throw new Error(
        `idem i${interpreters} e${executors}: ${commits} commits, not ${2 * REPOS + N}`,
      );
    return N / seconds;
  } finally {
    await stopAll(procs);
  }
}

/** The raw limit: `loops` plain loops at once, each on its share of the 16 repositories. */
async function rawRun(loops) {
  const dir = folderWithRepos(`raw-${loops}`);
  const content = join(dir, "output.txt");
  writeFileSync(content, OUTPUT);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: loops }, (_, l) => {
      const mine = Array.from({ length: REPOS }, (_, r) => r)
        .filter((r) => r % loops === l)
        .map((r) => join(dir, "repos", repoOf(r, REPOS)));
      return new Promise((resolve, reject) => {
        const c = spawn("bash", [LOOP, String(N / loops), content, ...mine], {
          env,
          stdio: ["ignore", "ignore", "inherit"],
        });
        c.once("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`loop exited ${code}`)),
        );
      });
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  if (commitsOnMain(dir) !== REPOS + N) throw new Error(`raw ${loops}: commits missing`);
  return N / seconds;
}

const CONFIGS = [
  [1, 1],
  [2, 1],
  [4, 1],
  [1, 2],
  [2, 2],
  [4, 2],
];
const name = ([i, e]) => `i${i}e${e}`;

try {
  mkdirSync(B, { recursive: true });
  pg = await startPostgres();
  log(`${N} jobs over ${REPOS} repositories, ${ROUNDS} rounds; folder ${B}`);
  const rates = await interleave(
    "scaling",
    {
      raw1: () => rawRun(1),
      raw4: () => rawRun(4),
      ...Object.fromEntries(CONFIGS.map((c) => [name(c), () => idemRun(...c)])),
    },
    { rounds: ROUNDS, warmup: 0 },
  );
  lastRates = rates;
  const label = ([i, e]) =>
    `jobs/s, ${i} interpreter process${i > 1 ? "es" : ""} (--concurrency ${PER_PROCESS} each), ${e} executor${e > 1 ? "s" : ""}`;
  const loopCmd = (loops) =>
    `${loops} × \`bash ${script("git-commit-repos.sh")} ${N / loops} OUTPUT REPO…\` at once, each on ${REPOS / loops} of the ${REPOS} repositories`;
  const results = [
    ...CONFIGS.filter((c) => name(c) !== "i1e1").map((c) =>
      row({
        metric: `${label(c)}: against 1 interpreter process and 1 executor`,
        unit: "jobs/s",
        idem: rates[name(c)],
        base: rates.i1e1,
        baseline: "idem, 1 interpreter process, 1 executor, in the same round",
      }),
    ),
    ...CONFIGS.map((c) =>
      row({
        metric: `${label(c)}: against the raw limit`,
        unit: "jobs/s",
        idem: rates[name(c)],
        base: rates.raw4,
        baseline: loopCmd(4),
      }),
    ),
    row({
      metric:
        "the raw limit itself: 4 plain loops at once, against 1 plain loop on all 16 repositories",
      unit: "jobs/s",
      idem: rates.raw4,
      base: rates.raw1,
      baseline: loopCmd(1),
      note: "plain loops on both sides: how far this machine grows with processes",
    }),
    figure({ metric: "1 plain loop on all 16 repositories", unit: "jobs/s", values: rates.raw1 }),
    figure({
      metric:
        "the journal's transactions per job (PostgreSQL's xact_commit of the run's database; every run of every configuration)",
      unit: "transactions",
      values: journalPerJob.xacts,
    }),
    figure({
      metric: "WAL bytes per job (pg_stat_wal; every run)",
      unit: "bytes",
      values: journalPerJob.walBytes,
    }),
    figure({
      metric: "WAL fsyncs per job (pg_stat_wal's wal_sync; every run: group commit shares them)",
      unit: "fsyncs",
      values: journalPerJob.walSyncs,
    }),
    ...CONFIGS.map((c) =>
      figure({
        metric: `CPU per job, ${c[0]} interpreter process${c[0] > 1 ? "es" : ""}, ${c[1]} executor${c[1] > 1 ? "s" : ""} (every idem process, \`idem enqueue\` and the PostgreSQL server, user + system)`,
        unit: "ms",
        values: cpuPerJob[name(c)] ?? [],
      }),
    ),
  ];
  report({
    name: "scaling",
    command: `node test/bench/scaling.bench.mjs --n ${N}`,
    results,
    notes: scalingNotes(),
  });
} finally {
  await stopAll([...live]);
  await pg?.stop();
  if (process.env.BENCH_KEEP === "1") log(`kept ${B}`);
  else rmSync(B, { recursive: true, force: true });
}

function scalingNotes() {
  const m = (xs) => fmt(median(xs));
  return [
    `${ROUNDS} interleaved rounds (every side once per round, the order reversed every other round), no warm-up round: each idem run starts afresh (16 repositories, a database of its own on the bench's PostgreSQL server, fsync on), puts one job per repository through untimed, then times from the start of \`idem enqueue FILE --concurrency 32\` (${N} jobs, job i committing jobs/job-i.txt, 1 KB, to r<i mod 16>) until every job's file is committed (the repositories' checked-out trees read every 100 ms; then \`git rev-list --count main\` of each must hold every commit). The executors are the peers bench's (the agent step in process, \`queue.maxAckPending\` 16 each); the interpreters \`idem interpreter --concurrency ${PER_PROCESS}\`. idem's commits are durable (objects and refs fsynced), the plain loops' git's default (no fsync). The raw loops write the same 1 KB file per commit.`,
    `Where the growth stops. On this machine (2 cores, shared) it is the CPU: a job costs idem about ${m(Object.values(cpuPerJob).flat())} ms of CPU in all (its processes and the PostgreSQL server), so 2 cores hold at most about ${fmt(2000 / median(Object.values(cpuPerJob).flat()))} jobs/s whatever the number of processes, and the raw loops themselves grow only ${m(rates4over1())}x from 1 loop to 4. A process added past the cores only adds its own polling and context switches. On paper, for a fleet on more machines: (1) **the journal**: every job is ${m(journalPerJob.xacts)} transactions on the one PostgreSQL primary (enqueue, claim, record, run claim, intent, settle, complete, events, leases) and ${m(journalPerJob.walBytes)} bytes of WAL, with ${m(journalPerJob.walSyncs)} WAL fsyncs per job at this load (group commit shares one fsync among the commits waiting on it, so the fsyncs per job fall as the load rises); claims and lease extensions commit without waiting for an fsync (synchronous_commit off). A primary that commits some 10,000-20,000 small transactions a second on good disks then carries roughly ${fmt(10_000 / median(journalPerJob.xacts))}-${fmt(20_000 / median(journalPerJob.xacts))} jobs/s for the whole fleet: that, not the interpreters, is the first ceiling, and past it the fleet needs a journal per group of targets. (2) **the lease protocol**: each idle interpreter and executor polls (\`interpreter.pollMs\` 200 ms, \`queue.pollMs\` 100 ms, woken at once by LISTEN/NOTIFY on a record or an enqueue) and sweeps for dead holders on its host every 500 ms, so each process costs the primary a few queries a second idle, and a NOTIFY wakes every listener: at hundreds of processes that is thousands of queries a second of its own before any job; claims use SKIP LOCKED, so they do not wait on each other. (3) **the per-branch order**: the runs of one ordering target (repo@branch) apply one after another, in recording order, held by one interpreter at a time (its pipeline): a fleet grows with the number of targets, never past it. Here 16 targets: 4 processes × ${PER_PROCESS} = 16 runs in flight is already one per target, so more interpreters would wait. One branch alone tops out at one interpreter's commit rate (the peers bench's single-branch rows).`,
  ];
}

function rates4over1() {
  return lastRates.raw4.map((v, i) => v / lastRates.raw1[i]);
}
