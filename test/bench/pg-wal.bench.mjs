// WAL fsyncs per job on a PostgreSQL journal (issue 35): the peers bench's workload (an agent step
// returning a fixed 1 KB output, recorded durably, then one git.commit of one file) pushed through
// the real built CLI, `idem executor --no-api` (embedded queue) and `idem interpreter`, on a
// disposable server of the bench's own (fsync and synchronous_commit on). A job's WAL fsyncs are
// pg_stat_wal's `wal_sync` delta over the phase / N: the server's every WAL fsync (backends, WAL
// writer, checkpointer), the same count the issue gives for DBOS (about 3.3 per job).
//
// Each round, on a fresh database:
// - enqueue: N jobs enqueued in this process (PostgresJournalStore.jobs.enqueue, 32 at a time);
// - executor: the executor alone until every output is recorded (its start included);
// - interpreter: the interpreter alone until every run is done (its start included);
// then, on another fresh database, both processes at once with the jobs enqueued while they run
// (as the peers bench does): `together`, its fsyncs per job and jobs/s (enqueue to all done).
// A CHECKPOINT precedes every phase, so no timed checkpoint lands inside one, and every process a
// phase starts has exited before its count is read (a backend reports its counts at exit).
// Usage: npm run build && node test/bench/pg-wal.bench.mjs [--n 200] (BENCH_ROUNDS, default 3;
// IDEM_CLI=<path to bin/idem.js> runs another build, e.g. main's, for alternating rounds).
// Prints one JSON object (see run.mjs): a row per phase, each the median of the rounds.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresJournalStore } from "@idem/journal";
import { startPostgres } from "@idem/testing";
import pg from "pg";
import { figure, report, size } from "./lib/measure.mjs";
import { ROOT } from "./lib/plain.mjs";
import { fileOf, jobIds, messageOf, OUTPUT, seedRepo } from "./peers/lib/workload.mjs";

const N = size("n", 200, 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** IDEM_CLI: another build of the CLI (an earlier commit's, for before/after rounds). */
const IDEM = process.env.IDEM_CLI ?? join(ROOT, "apps/cli/bin/idem.js");
const B = mkdtempSync(join(tmpdir(), "idem-pg-wal-"));
const log = (m) => process.stderr.write(`pg-wal: ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The command agent: prints the AgentOutput, a git.commit of jobs/<jobId>.txt holding 1 KB. */
function agentScript() {
  const effect = {
    kind: "git.commit",
    repo: "site",
    message: messageOf("%s"),
    files: [{ path: fileOf("%s"), content: "%s" }],
  };
  const format = JSON.stringify({ summary: "1 KB", effects: [effect] });
  const content = JSON.stringify(OUTPUT).slice(1, -1);
  return `#!/bin/sh\nprintf '${format}' "$IDEM_JOB_ID" "$IDEM_JOB_ID" '${content}'\n`;
}

/** A workspace on database `url`: config, seeded repository, agent. Answers the config file. */
function workspace(name, url) {
  const dir = join(B, name);
  seedRepo(join(dir, "repo"));
  writeFileSync(join(dir, "agent.sh"), agentScript());
  const config = {
    journal: { url },
    repos: { site: { path: "repo" } },
    agents: { writer: { command: ["sh", "./agent.sh"], timeoutMs: 60_000 } },
  };
  const file = join(dir, "idem.config.json");
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { dir, file };
}

/** Starts `idem <role>`; answers a stop that SIGTERMs that PID and waits for its exit. */
function start(role, ws) {
  const args = role === "executor" ? ["executor", "--no-api"] : ["interpreter"];
  const child = spawn(process.execPath, [IDEM, ...args, "--config", ws.file], {
    cwd: ws.dir,
    env: { ...process.env, NO_COLOR: "1", IDEM_LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise((r) => child.once("exit", r));
  return async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  };
}

async function enqueueAll(url, tag) {
  const j = await PostgresJournalStore.open(url, { max: 32 });
  const ids = jobIds(N, tag);
  for (let i = 0; i < ids.length; i += 32) {
    await Promise.all(
      ids.slice(i, i + 32).map((jobId) => j.jobs.enqueue({ jobId, agent: "writer", input: {} })),
    );
  }
  await j.close();
}

const server = await startPostgres();
const admin = new pg.Client({ connectionString: server.url });
admin.on("error", () => {});
await admin.connect();
const walSyncs = async () =>
  Number((await admin.query("SELECT wal_sync FROM pg_stat_wal")).rows[0].wal_sync);

/** Counts until `sql` (on database `url`) answers N, polling every 50 ms. */
async function until(url, sql) {
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => {});
  await c.connect();
  try {
    for (;;) {
      if (Number((await c.query(sql)).rows[0].n) >= N) return;
      await sleep(50);
    }
  } finally {
    await c.end();
  }
}
const recorded = "SELECT count(*) AS n FROM outputs";
const done = "SELECT count(*) AS n FROM runs WHERE state = 'done'";

/**
 * The WAL fsyncs `fn` costs: a CHECKPOINT first, then the wal_sync delta. `fn` ends every process
 * it started: a backend adds its counts to pg_stat_wal when it exits, or up to 10 s after it goes
 * idle (PostgreSQL 15), so a live one's would be missed.
 */
async function syncsOf(fn) {
  await admin.query("CHECKPOINT");
  await sleep(300);
  const before = await walSyncs();
  await fn();
  await sleep(300);
  return { syncs: (await walSyncs()) - before };
}

async function phases(r) {
  const url = await server.createDatabase(`split_${r}`);
  await (await PostgresJournalStore.open(url, { max: 1 })).close();
  const ws = workspace(`split-${r}`, url);
  const enq = await syncsOf(() => enqueueAll(url, "job"));
  const ex = await syncsOf(async () => {
    const stop = start("executor", ws);
    await until(url, recorded);
    await stop();
  });
  const it = await syncsOf(async () => {
    const stop = start("interpreter", ws);
    await until(url, done);
    await stop();
  });
  return { enqueue: enq.syncs / N, executor: ex.syncs / N, interpreter: it.syncs / N };
}

async function together(r) {
  const url = await server.createDatabase(`together_${r}`);
  await (await PostgresJournalStore.open(url, { max: 1 })).close();
  const ws = workspace(`together-${r}`, url);
  const stops = [start("executor", ws), start("interpreter", ws)];
  await sleep(1500); // both started and idle
  let ms = 0;
  const all = await syncsOf(async () => {
    const t0 = performance.now();
    await enqueueAll(url, "job");
    await until(url, done);
    ms = performance.now() - t0;
    await Promise.all(stops.map((s) => s()));
  });
  return { perJob: all.syncs / N, jobsPerSec: (N * 1000) / ms };
}

const out = { n: N, rounds: [] };
try {
  for (let r = 0; r < ROUNDS; r++) {
    const split = await phases(r);
    const both = await together(r);
    const round = { ...split, together: both.perJob, jobsPerSec: both.jobsPerSec };
    out.rounds.push(round);
    log(
      `round ${r + 1}/${ROUNDS}: ${JSON.stringify(round, (_, v) => (typeof v === "number" ? Number(v.toFixed(2)) : v))}`,
    );
  }
  const of = (k) => out.rounds.map((x) => x[k]);
  const syncs = (k, what) =>
    figure({ metric: `PostgreSQL WAL fsyncs per job: ${what}`, unit: "fsyncs", values: of(k) });
  report({
    name: "pg-wal",
    command: "node test/bench/pg-wal.bench.mjs",
    results: [
      syncs(
        "together",
        "executor and interpreter at once, the jobs enqueued while they run (as in npm run bench:peers)",
      ),
      syncs("enqueue", "enqueue alone"),
      syncs("executor", "the executor alone (claim, agent, record)"),
      syncs("interpreter", "the interpreter alone (claim, intent, git.commit, settle, done)"),
      figure({
        metric: "jobs/s, executor and interpreter at once",
        unit: "jobs/s",
        values: of("jobsPerSec"),
      }),
    ],
    notes: [
      `${ROUNDS} rounds of ${N} jobs, each a fresh database on a disposable PostgreSQL of the bench's own (fsync and synchronous_commit on); a job is the peers bench's: an agent step returning a fixed 1 KB output, recorded durably, then one git.commit of one file. WAL fsyncs are pg_stat_wal's wal_sync delta over a phase (backends, WAL writer and checkpointer alike) divided by the jobs. Issue 35 measured DBOS Transact at about 3.3 per job on the same workload (not run here: npm run bench:peers runs DBOS).`,
    ],
  });
} finally {
  await admin.end();
  await server.stop();
  if (!process.env.BENCH_KEEP) rmSync(B, { recursive: true, force: true });
}
