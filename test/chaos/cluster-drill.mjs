#!/usr/bin/env node
// The cluster drill (`npm run drill:cluster`, issue 20): three idem hosts, each an executor and an
// interpreter with its own working directory and git mirror, each in its own network namespace on
// a bridge to the services: a three-node NATS cluster with R3 streams, a disposable PostgreSQL
// journal, a git daemon serving the bare repository the agents commit to, and an HTTP target. A
// seeded controller, while jobs flow, SIGKILLs executors and interpreters (often armed with
// IDEM_FAULT), SIGKILLs one NATS node at a time and restarts it, SIGKILLs PostgreSQL and restarts
// it, cuts a host off from everything for longer than a lease and heals it, and SIGSTOPs an
// interpreter past its lease. Then it counts from the journal, the agents' run logs, the remote
// repository and the HTTP target, prints the table and exits 1 on any violation (2: the drill
// itself could not finish).
//
//   node test/chaos/cluster-drill.mjs [--jobs 5000] [--kills 300] [--nats-kills 10]
//     [--pg-restarts 3] [--partitions 3] [--stops 3] [--seed N] [--json] [--keep]
//
// Runs as root (network namespaces). Every server is the drill's own, stopped by its PID.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { enqueueJobs } from "@idem/core";
import { PostgresJournalStore } from "@idem/journal";
import { withJobPublisher } from "@idem/nats";
import { parseConfig } from "@idem/schema";
import { createNetnsNetwork, startGitDaemon, startNatsCluster, startPostgres } from "@idem/testing";
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
    jobs: { type: "string", default: "5000" },
    kills: { type: "string", default: "300" },
    "nats-kills": { type: "string", default: "10" },
    "pg-restarts": { type: "string", default: "3" },
    partitions: { type: "string", default: "3" },
    stops: { type: "string", default: "3" },
    seed: { type: "string", default: "20" },
    json: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    "timeout-s": { type: "string", default: "5400" },
  },
});
const JOBS = Number(args.jobs);
const BUDGET = {
  kills: Number(args.kills),
  natsKills: Number(args["nats-kills"]),
  pgRestarts: Number(args["pg-restarts"]),
  partitions: Number(args.partitions),
  stops: Number(args.stops),
};
const SEED = Number(args.seed);
const AGENTS = ["writer", "reviewer", "planner"];
const LEASE_MS = 4000;
const random = rng(SEED);
const pick = (xs) => xs[Math.floor(random() * xs.length)];
const log = (...m) =>
  process.stderr.write(`[cluster ${new Date().toISOString().slice(11, 23)}] ${m.join(" ")}\n`);

// Six lanes, each a branch of the remote repository and a folder of the shared file system: runs
// on one lane are applied in recording order, lanes in parallel (one target holder each).
const LANES = 6;
const AGENT_SCRIPT = agentScript(`(job, nonce) => [
  { kind: "http.request", target: "ledger", method: "POST", path: "/" + job.jobId, body: { job: job.jobId, nonce } },
  { kind: "git.commit", repo: "site", branch: "lane-" + (job.input.n % ${LANES}), message: "drill: " + job.jobId,
    files: [{ path: "jobs/" + job.jobId + ".txt", content: nonce + "\\n" }] },
  { kind: "file.write", root: "lane" + (job.input.n % ${LANES}), path: job.jobId + ".json", content: JSON.stringify({ job: job.jobId, nonce }) },
]`);

function hostConfig(s, host) {
  return {
    journal: { url: s.journalUrl },
    nats: {
      servers: s.natsUrls,
      replicas: 3,
      stream: "DRILL_JOBS",
      subjectPrefix: "drill",
      duplicateWindowMs: 600_000,
      maxAgeMs: 3_600_000,
      publishRetryMs: 120_000,
    },
    repos: {
      site: {
        url: s.repoUrl,
        branch: "main",
        branches: Array.from({ length: LANES }, (_, i) => `lane-${i}`),
      },
    },
    roots: Object.fromEntries(
      Array.from({ length: LANES }, (_, i) => [
        `lane${i}`,
        { path: join(s.sharedRoot, `lane${i}`) },
      ]),
    ),
    http: {
      targets: {
        ledger: {
          baseUrl: `http://${s.address}:${s.receiverPort}/effects`,
          idempotencyKeys: false,
          probeUrl: `http://${s.address}:${s.receiverPort}/probe/{key}`,
          timeoutMs: 10_000,
        },
      },
    },
    agents: Object.fromEntries(
      AGENTS.map((a) => [
        a,
        { command: [process.execPath, host.agentScript, a, host.runsLog], timeoutMs: 20_000 },
      ]),
    ),
    queue: { ackWaitMs: 5000, maxDeliver: 100, backoffMs: [1000, 2000], maxAckPending: 4 },
    interpreter: {
      leaseMs: LEASE_MS,
      pollMs: 200,
      maxAttempts: 100,
      maxLeaseExpiries: 10_000,
      backoffMs: [200, 1000],
    },
    api: { port: 0 },
  };
}

async function main() {
  if (process.getuid?.() !== 0)
    throw new Error("the cluster drill needs root (network namespaces)");
  const work = mkdtempSync(join(tmpdir(), "idem-cluster-drill-"));
  log(`seed ${SEED}, ${JOBS} jobs, budget ${JSON.stringify(BUDGET)}, workspace ${work}`);
  log(`run ${teardown.runId}`);
  const net = await createNetnsNetwork();
  teardown.add("network", () => net.remove());
  const pg = await startPostgres({ listen: { address: net.address, network: net.network } });
  teardown.add("postgres", () => pg.stop());
  const dbUrl = await pg.createDatabase("cluster_drill");
  const journalUrl = dbUrl.replace("127.0.0.1", net.address);
  const cluster = await startNatsCluster({ size: 3, host: net.address });
  teardown.add("nats cluster", () => cluster.stop());
  const daemon = await startGitDaemon({ host: net.address });
  teardown.add("git daemon", () => daemon.stop());
  const repo = daemon.createRepo("site");
  // Every lane's branch starts at the seed commit, as a team's branches would exist already.
  for (let i = 0; i < LANES; i++)
    execFileSync("git", ["--git-dir", repo.path, "branch", `lane-${i}`, "main"]);
  const receiver = await startReceiver(net.address);
  teardown.add("receiver", async () => receiver.server.close());
  const sharedRoot = join(work, "shared-fs/out");
  for (let i = 0; i < LANES; i++) mkdirSync(join(sharedRoot, `lane${i}`), { recursive: true });
  const services = {
    address: net.address,
    journalUrl,
    natsUrls: cluster.urls,
    repoUrl: repo.url,
    sharedRoot,
    receiverPort: receiver.port,
  };
  const hosts = [];
  for (const name of ["host-a", "host-b", "host-c"]) {
    const ns = await net.addHost();
    log(`host ${name}: network namespace ${ns.name}, bridge ${net.bridge}`);
    const dir = join(work, name);
    mkdirSync(dir);
    const host = {
      name,
      ns,
      dir,
      runsLog: join(dir, "runs.log"),
      agentScript: join(dir, "agent.mjs"),
    };
    writeFileSync(host.agentScript, AGENT_SCRIPT);
    host.configFile = join(dir, "idem.config.json");
    writeFileSync(host.configFile, JSON.stringify(hostConfig(services, host), null, 2));
    hosts.push(host);
  }
  // The controller's own view: the same services, from this machine's side of the bridge.
  const parsed = parseConfig(hostConfig(services, hosts[0]), { dir: work });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;

  // --- processes under the controller ---------------------------------------------------------
  const logFile = join(work, "processes.log");
  const sup = createSupervisor({
    idem: IDEM,
    logFile,
    random,
    kills: BUDGET.kills,
    children,
    log,
    spawn: (host, argv, options) => host.ns.spawn(process.execPath, argv, options),
  });
  teardown.halt(() => sup.halt());
  const { procs, kills } = sup;
  const tally = Object.assign(sup.tally, { natsKills: 0, pgRestarts: 0, partitions: 0, stops: 0 });

  const journal = await PostgresJournalStore.open(dbUrl);
  const t0 = Date.now();
  sup.startAll(hosts);
  const jobs = Array.from({ length: JOBS }, (_, i) => ({
    jobId: `job-${String(i).padStart(6, "0")}`,
    agent: AGENTS[i % AGENTS.length],
    input: { n: i },
  }));
  const jobIds = jobs.map((j) => j.jobId);
  const enqueueAll = withJobPublisher(config, "drill", async (publisher) => {
    for (let i = 0; i < JOBS; i += 50) {
      for (;;) {
        const r = await enqueueJobs(jobs.slice(i, i + 50), { journal, publisher, actor: "drill" });
        const refused = r.outcomes.filter((o) => o?.error?.code === "JOB_CONFLICT");
        if (refused.length) throw new Error(`enqueue refused: ${JSON.stringify(refused[0])}`);
        // No PubAck within publishRetryMs (a long election): the slice again, its published jobs
        // answered as duplicates; a job left UNAVAILABLE is in the outbox, republished anyway.
        if (!r.stoppedBy) break;
        log(`enqueue stopped (${r.stoppedBy.message}); again`);
      }
    }
    // An orchestrator that retries: every 50th job is enqueued again (a duplicate, nothing new).
    await enqueueJobs(
      jobs.filter((_, i) => i % 50 === 0),
      { journal, publisher, actor: "drill" },
    );
    log(`enqueued ${JOBS} jobs in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });

  // --- chaos -----------------------------------------------------------------------------------
  // Each disruption has a budget spread over the run; one disruption of a server or a network at
  // a time, while process kills go on.
  const due = (n, progress) => n * Math.min(1, 0.05 + progress * 1.1);
  const deadline = Date.now() + Number(args["timeout-s"]) * 1000;
  let lastTenth = -1;
  let busy = false;
  const disrupt = (what, fn) => {
    busy = true;
    log(what);
    fn()
      .catch((e) => log(`${what} failed: ${e?.stack ?? e}`))
      .finally(() => {
        busy = false;
      });
  };
  for (;;) {
    if (Date.now() > deadline) throw new Error(`the drill timed out; see ${logFile}`);
    // A process started while its host is cut off or the journal is down exits and is restarted;
    // beyond that, exits by themselves mean something is wrong.
    if (tally.otherExits > 40 + 40 * (BUDGET.partitions + BUDGET.pgRestarts))
      throw new Error(`processes keep exiting by themselves; see ${logFile}`);
    await sleep(100 + Math.floor(random() * 400));
    let s;
    try {
      s = await journal.status();
    } catch {
      continue; // PostgreSQL is down: the drill's own reads wait like everyone else
    }
    const progress = s.outputs / JOBS;
    if (Math.floor(progress * 10) !== lastTenth) {
      lastTenth = Math.floor(progress * 10);
      log(
        `outputs ${s.outputs}/${JOBS}, runs done ${s.runs.done}, kills ${kills()}, ${JSON.stringify(tally)}`,
      );
    }
    const active = s.runs.pending + s.runs.running + s.runs.failed;
    const spent =
      kills() >= BUDGET.kills &&
      tally.natsKills >= BUDGET.natsKills &&
      tally.pgRestarts >= BUDGET.pgRestarts &&
      tally.partitions >= BUDGET.partitions &&
      tally.stops >= BUDGET.stops;
    if (s.outputs >= JOBS && active === 0 && spent && !busy) break;
    const late = s.outputs >= JOBS; // finished early: spend what is left now
    if (
      !busy &&
      tally.natsKills < BUDGET.natsKills &&
      (late || tally.natsKills < due(BUDGET.natsKills, progress))
    ) {
      const node = pick(cluster.nodes);
      disrupt(`SIGKILL NATS node ${node.name}`, async () => {
        await node.kill("SIGKILL");
        await sleep(500 + Math.floor(random() * 3000));
        await node.restart();
        await cluster.waitForMetaLeader(120_000);
        await cluster.waitForStreamLeader("DRILL_JOBS", 3, 120_000);
        tally.natsKills += 1;
      });
    } else if (
      !busy &&
      tally.pgRestarts < BUDGET.pgRestarts &&
      (late || tally.pgRestarts < due(BUDGET.pgRestarts, progress))
    ) {
      disrupt("SIGKILL PostgreSQL", async () => {
        await pg.kill();
        await sleep(500 + Math.floor(random() * 3000));
        await pg.restart();
        tally.pgRestarts += 1;
      });
    } else if (
      !busy &&
      tally.partitions < BUDGET.partitions &&
      (late || tally.partitions < due(BUDGET.partitions, progress))
    ) {
      const host = pick(hosts);
      disrupt(`cut ${host.name} off past its leases`, async () => {
        await host.ns.cut();
        await sleep(LEASE_MS * 2 + Math.floor(random() * LEASE_MS));
        await host.ns.heal();
        tally.partitions += 1;
      });
    } else if (
      !busy &&
      tally.stops < BUDGET.stops &&
      (late || tally.stops < due(BUDGET.stops, progress))
    ) {
      const p = procs.get(`${pick(hosts).name}/interpreter`);
      disrupt(`SIGSTOP ${p.host.name}/interpreter past its lease`, async () => {
        p.child.kill("SIGSTOP");
        await sleep(LEASE_MS * 2);
        p.child.kill("SIGCONT");
        tally.stops += 1;
      });
    }
    if (
      kills() < BUDGET.kills &&
      (kills() < due(BUDGET.kills, progress) || late) &&
      random() < 0.7
    ) {
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
  const { runs, lateRuns, runsByHost } = readAgentRuns(hosts, outputs);
  const runCounts = [...runs.values()];
  // The remote branch: each key's Idem-Effect trailers, and each job's file as the agent wrote it.
  const trailers = new Map();
  const logText = execFileSync(
    "git",
    ["--git-dir", repo.path, "log", "--format=%(trailers:key=Idem-Effect,valueonly)", "--branches"],
    { encoding: "utf8", maxBuffer: 1 << 28 },
  );
  for (const key of logText
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean))
    trailers.set(key, (trailers.get(key) ?? 0) + 1);
  const duplicateCommits = [...trailers].filter(([, n]) => n > 1);
  const duplicateRequests = [...receiver.deliveries].filter(([, list]) => list.length > 1);
  let missingEffects = 0;
  let wrongContent = 0;
  for (const [id, o] of outputs) {
    const [http, commit, file] = o.output.effects;
    const got = receiver.deliveries.get(`${id}/0`);
    if (!got) missingEffects += 1;
    else if (JSON.parse(got[0].body).nonce !== http.body.nonce) wrongContent += 1;
    if (!trailers.has(`${id}/1`)) missingEffects += 1;
    else {
      const content = execFileSync(
        "git",
        ["--git-dir", repo.path, "show", `${commit.branch}:${commit.files[0].path}`],
        {
          encoding: "utf8",
        },
      );
      if (content !== commit.files[0].content) wrongContent += 1;
    }
    const path = join(sharedRoot, file.root, file.path);
    if (!existsSync(path)) missingEffects += 1;
    else if (readFileSync(path, "utf8") !== file.content) wrongContent += 1;
  }
  const row = (name, value, ok) => ({ name, value, ok });
  const table = [
    row("hosts (network namespaces)", hosts.length, true),
    row("NATS nodes (R3 streams)", cluster.nodes.length, true),
    row("jobs enqueued", jobIds.length, jobIds.length === JOBS),
    row("redeliveries skipped by the journal", events["redelivery.skipped"], true),
    row(
      "agent runs (total)",
      runCounts.reduce((a, b) => a + b, 0),
      true,
    ),
    row("agent runs per host", hosts.map((h) => runsByHost[h.name]).join(" / "), true),
    row("agent runs after the output was recorded", lateRuns.length, lateRuns.length === 0),
    row("outputs recorded (one per job)", status.outputs, status.outputs === JOBS),
    row("conflicting outputs refused", events["output.conflict"], events["output.conflict"] === 0),
    row("effects applied", status.effects.applied, true),
    row("effects found present by a probe", status.effects.present, true),
    row(
      "commits on the remote branches",
      [...trailers.values()].reduce((a, b) => a + b, 0),
      true,
    ),
    row("duplicate commits on the remote", duplicateCommits.length, duplicateCommits.length === 0),
    row("duplicate http requests", duplicateRequests.length, duplicateRequests.length === 0),
    row("missing effects at targets", missingEffects, missingEffects === 0),
    row("effects with other content", wrongContent, wrongContent === 0),
    row("runs done", status.runs.done, status.runs.done === JOBS),
    row("runs dead", status.runs.dead, status.runs.dead === 0),
    row("dead letters", status.deadLetters, status.deadLetters === 0),
    row("lost jobs", lost.length, lost.length === 0),
    row(
      "kills (controller SIGKILL + fault points)",
      `${kills()} (${tally.controllerKills} + ${tally.faultKills})`,
      kills() >= BUDGET.kills,
    ),
    row("NATS node kills", tally.natsKills, tally.natsKills >= BUDGET.natsKills),
    row("PostgreSQL restarts", tally.pgRestarts, tally.pgRestarts >= BUDGET.pgRestarts),
    row("hosts cut off past a lease", tally.partitions, tally.partitions >= BUDGET.partitions),
    row("interpreters stopped past a lease", tally.stops, tally.stops >= BUDGET.stops),
    row("process restarts", tally.restarts, true),
    row("wall time (s)", elapsed.toFixed(1), true),
  ];
  for (const r of table) if (!r.ok) violations.push(`${r.name}: ${r.value}`);
  if (lateRuns.length) violations.push(`late agent runs: ${lateRuns.slice(0, 10).join(", ")}`);
  for (const [what, list] of [
    ["commits", duplicateCommits],
    ["requests", duplicateRequests],
  ])
    if (list.length)
      violations.push(
        `duplicate ${what}: ${list
          .slice(0, 10)
          .map(([k, n]) => `${k} x${n.length ?? n}`)
          .join(", ")}`,
      );
  if (lost.length) violations.push(`lost: ${lost.slice(0, 10).join(", ")}`);
  await journal.close();
  await teardown.run();
  printReport({
    title: "idem cluster drill (3 hosts, 3 NATS nodes, PostgreSQL, git daemon)",
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
 * kills its processes (no restart after), stops its servers by their PIDs, removes the network and
 * kills whatever of the run is left: nothing outlives it (lib/teardown.mjs).
 */
const teardown = createTeardown({ log });
const abandon = endThroughTeardown(teardown, log);
main().catch((e) => abandon(`drill failed: ${e?.stack ?? e}`));
