#!/usr/bin/env node
// Three hosts, one journal (`npm run drill:hosts`, issue 18): three working directories, each with
// its own `idem executor` and `idem interpreter` and none of the others' files, share one
// disposable PostgreSQL as journal and queue (the embedded queue, claimed with SKIP LOCKED). A
// controller SIGKILLs the processes at random moments and at the named fault points and restarts
// them; then it checks one output per job, no agent run after its output was recorded, every
// effect once at its target, every run done, prints the table and exits non-zero on a violation.
//
//   node test/chaos/hosts-drill.mjs [--jobs 500] [--kills 60] [--seed N] [--json] [--keep]
//
// The targets every host reaches without sharing idem's files:
// - `http.request` to a receiver in this process (target `ledger`, no Idempotency-Key dedup, a
//   probeUrl). It counts every request by its Idempotency-Key, so "once at the target" is a count
//   of real deliveries: a second request for a key is a duplicate however idem got there.
// - `file.write` into one root directory every host's config names: a shared file system (on one
//   machine a shared directory; across machines it would be NFS or the like).
// Git targets are on one host's disk and unreachable from the others (remote git: issue 19).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { enqueueJobs } from "@idem/core";
import { PostgresJournalStore } from "@idem/journal";
import { startPostgres } from "@idem/testing";
import {
  agentScript,
  printReport,
  readAgentRuns,
  rng,
  sleep,
  startReceiver,
} from "./lib/drill-kit.mjs";
import { createSupervisor } from "./lib/supervisor.mjs";
import { createTeardown, endThroughTeardown } from "./lib/teardown.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const IDEM = join(here, "../../apps/cli/bin/idem.js");
const { values: args } = parseArgs({
  options: {
    jobs: { type: "string", default: "500" },
    kills: { type: "string", default: "60" },
    seed: { type: "string" },
    json: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    "timeout-s": { type: "string", default: "1200" },
  },
});
const JOBS = Number(args.jobs);
const KILLS = Number(args.kills);
const SEED = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(args.seed);
const HOSTS = ["host-a", "host-b", "host-c"];
const AGENTS = ["writer", "reviewer", "planner"];
const LEASE_MS = 3000;

const random = rng(SEED);
const log = (...m) =>
  process.stderr.write(`[hosts ${new Date().toISOString().slice(11, 23)}] ${m.join(" ")}\n`);

const AGENT_SCRIPT = agentScript(`(job, nonce) => [
  { kind: "http.request", target: "ledger", method: "POST", path: "/" + job.jobId, body: { job: job.jobId, nonce } },
  { kind: "file.write", root: "shared", path: job.jobId + ".json", content: JSON.stringify({ job: job.jobId, nonce }) },
]`);

function hostConfig(url, receiverPort, sharedRoot, runsLog, agentScript) {
  return {
    journal: { url },
    roots: { shared: { path: sharedRoot } },
    http: {
      targets: {
        ledger: {
          baseUrl: `http://127.0.0.1:${receiverPort}/effects`,
          idempotencyKeys: false,
          probeUrl: `http://127.0.0.1:${receiverPort}/probe/{key}`,
          timeoutMs: 10_000,
        },
      },
    },
    agents: Object.fromEntries(
      AGENTS.map((a) => [
        a,
        { command: [process.execPath, agentScript, a, runsLog], timeoutMs: 10_000 },
      ]),
    ),
    queue: { ackWaitMs: 3000, maxDeliver: 50, backoffMs: [200, 1000], maxAckPending: 4 },
    interpreter: {
      leaseMs: LEASE_MS,
      pollMs: 200,
      maxAttempts: 50,
      maxLeaseExpiries: 10_000,
      backoffMs: [100, 500],
    },
    api: { port: 0 },
  };
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), "idem-hosts-drill-"));
  log(`seed ${SEED}, ${JOBS} jobs, ${KILLS} kills, workspace ${work}`);
  log(`run ${teardown.runId}`);
  const pg = await startPostgres();
  teardown.add("postgres", () => pg.stop());
  const url = await pg.createDatabase("hosts_drill");
  const receiver = await startReceiver();
  teardown.add("receiver", async () => receiver.server.close());
  const sharedRoot = join(work, "shared-fs/out");
  mkdirSync(sharedRoot, { recursive: true });
  const hosts = HOSTS.map((name) => {
    const dir = join(work, name);
    mkdirSync(dir);
    const agentScript = join(dir, "agent.mjs");
    writeFileSync(agentScript, AGENT_SCRIPT);
    const runsLog = join(dir, "runs.log");
    const configFile = join(dir, "idem.config.json");
    const config = hostConfig(url, receiver.port, sharedRoot, runsLog, agentScript);
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    return { name, dir, runsLog, configFile };
  });

  // --- processes under the controller ---------------------------------------------------------
  const logFile = join(work, "processes.log");
  const sup = createSupervisor({
    idem: IDEM,
    logFile,
    random,
    kills: KILLS,
    children,
    log,
    spawn: (_host, argv, options) => spawn(process.execPath, argv, options),
  });
  teardown.halt(() => sup.halt());
  const { tally, kills } = sup;

  const journal = await PostgresJournalStore.open(url);
  const t0 = Date.now();
  sup.startAll(hosts);
  const jobs = Array.from({ length: JOBS }, (_, i) => ({
    jobId: `job-${String(i).padStart(6, "0")}`,
    agent: AGENTS[i % AGENTS.length],
    input: { n: i },
  }));
  const jobIds = jobs.map((j) => j.jobId);
  const enqueueAll = (async () => {
    // In slices, so the executors start on the first while the rest are written.
    for (let i = 0; i < JOBS; i += 50)
      await enqueueJobs(jobs.slice(i, i + 50), { journal, actor: "drill" });
    // An orchestrator that retries: every 50th job is enqueued again (a duplicate, nothing new).
    await enqueueJobs(
      jobs.filter((_, i) => i % 50 === 0),
      { journal, actor: "drill" },
    );
    log(`enqueued ${JOBS} jobs in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  })();

  // --- chaos -----------------------------------------------------------------------------------
  const deadline = Date.now() + Number(args["timeout-s"]) * 1000;
  let lastTenth = -1;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`the drill timed out; see ${logFile}`);
    if (tally.otherExits > 20)
      throw new Error(`processes keep exiting by themselves; see ${logFile}`);
    await sleep(100 + Math.floor(random() * 400));
    const s = await journal.status();
    const progress = s.outputs / JOBS;
    if (Math.floor(progress * 10) !== lastTenth) {
      lastTenth = Math.floor(progress * 10);
      log(`outputs ${s.outputs}/${JOBS}, runs done ${s.runs.done}, kills ${kills()}`);
    }
    const active = s.runs.pending + s.runs.running + s.runs.failed;
    if (s.outputs >= JOBS && active === 0 && kills() >= KILLS) break;
    // Spread the kill budget over the run: ahead of schedule, hold back.
    const due = KILLS * Math.min(1, 0.05 + progress * 1.1);
    if (kills() < KILLS && (kills() < due || s.outputs >= JOBS) && random() < 0.7) {
      sup.killOne();
    }
  }
  await enqueueAll;
  const elapsed = (Date.now() - t0) / 1000;
  await sup.stopAll();

  // --- checks ----------------------------------------------------------------------------------
  const violations = [];
  const status = await journal.status();
  const events = await journal.events.count(["redelivery.skipped", "output.conflict"]);
  const outputs = new Map();
  for (const id of jobIds) {
    const o = await journal.outputs.get(id);
    if (o) outputs.set(id, o);
  }
  const lost = jobIds.filter((id) => !outputs.has(id));
  // Agent runs, from each host's own log: none may start after the job's output was recorded.
  const { runs, lateRuns, runsByHost } = readAgentRuns(hosts, outputs);
  const runCounts = [...runs.values()];
  // Effects at their targets: every request the receiver saw, by key; every shared file's content.
  const duplicateKeys = [...receiver.deliveries].filter(([, list]) => list.length > 1);
  const strayKeys = [...receiver.deliveries.keys()].filter(
    (k) => !outputs.has(k.replace(/\/\d+$/, "")),
  );
  let missingEffects = 0;
  let wrongContent = 0;
  for (const [id, o] of outputs) {
    const [http, file] = o.output.effects;
    const got = receiver.deliveries.get(`${id}/0`);
    if (!got) missingEffects += 1;
    else if (
      got[0].path !== `/effects${http.path}` ||
      JSON.parse(got[0].body).nonce !== http.body.nonce
    )
      wrongContent += 1;
    const path = join(sharedRoot, file.path);
    if (!existsSync(path)) missingEffects += 1;
    else if (readFileSync(path, "utf8") !== file.content) wrongContent += 1;
  }
  const requests = [...receiver.deliveries.values()].reduce((n, l) => n + l.length, 0);
  const row = (name, value, ok) => ({ name, value, ok });
  const table = [
    row("hosts (executor + interpreter each)", HOSTS.length, true),
    row("jobs enqueued", jobIds.length, jobIds.length === JOBS),
    row("redeliveries skipped by the journal", events["redelivery.skipped"], true),
    row(
      "agent runs (total)",
      runCounts.reduce((a, b) => a + b, 0),
      true,
    ),
    row("agent runs per host", HOSTS.map((h) => runsByHost[h]).join(" / "), true),
    row("agent runs per job (max)", Math.max(0, ...runCounts), true),
    row("agent runs after the output was recorded", lateRuns.length, lateRuns.length === 0),
    row("outputs recorded (one per job)", status.outputs, status.outputs === JOBS),
    row("conflicting outputs refused", events["output.conflict"], events["output.conflict"] === 0),
    row("effects applied", status.effects.applied, true),
    row("effects found present by a probe", status.effects.present, true),
    row("http requests received", requests, requests === outputs.size),
    row("duplicate effects at targets", duplicateKeys.length, duplicateKeys.length === 0),
    row("stray requests at targets", strayKeys.length, strayKeys.length === 0),
    row("missing effects at targets", missingEffects, missingEffects === 0),
    row("effects with other content", wrongContent, wrongContent === 0),
    row("runs done", status.runs.done, status.runs.done === JOBS),
    row("runs dead", status.runs.dead, status.runs.dead === 0),
    row("dead letters", status.deadLetters, status.deadLetters === 0),
    row("lost jobs", lost.length, lost.length === 0),
    row(
      "kills (controller SIGKILL + fault points)",
      `${kills()} (${tally.controllerKills} + ${tally.faultKills})`,
      kills() >= KILLS,
    ),
    row("process restarts", tally.restarts, true),
    row("wall time (s)", elapsed.toFixed(1), true),
    row("seed", SEED, true),
  ];
  for (const r of table) if (!r.ok) violations.push(`${r.name}: ${r.value}`);
  if (lateRuns.length) violations.push(`late agent runs: ${lateRuns.slice(0, 10).join(", ")}`);
  if (duplicateKeys.length)
    violations.push(
      `duplicate keys: ${duplicateKeys
        .slice(0, 10)
        .map(([k, l]) => `${k} x${l.length}`)
        .join(", ")}`,
    );
  if (lost.length) violations.push(`lost: ${lost.slice(0, 10).join(", ")}`);
  await journal.close();
  await teardown.run();

  printReport({
    title: "idem three-hosts drill (one PostgreSQL journal)",
    seed: SEED,
    table,
    violations,
    json: args.json,
  });
  if (args.keep || violations.length) log(`workspace kept at ${work}`);
  else rmSync(work, { recursive: true, force: true });
  process.exit(violations.length ? 1 : 0);
}

/** Every child still running: the supervisor's, killed by the teardown before anything else. */
const children = new Set();
/**
 * However the drill ends (its verdict, an abandon, SIGINT, SIGTERM, a stray error), one teardown
 * kills its processes (no restart after), stops PostgreSQL by its PID and kills whatever of the run
 * is left: nothing outlives it (lib/teardown.mjs).
 */
const teardown = createTeardown({ log });
const abandon = endThroughTeardown(teardown, log);
main().catch((e) => abandon(`drill failed: ${e?.stack ?? e}`));
