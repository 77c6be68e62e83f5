#!/usr/bin/env node
// The chaos drill (`npm run drill`): jobs for 5 agents through a real nats-server -> idem executor ->
// journal -> idem interpreter -> git and file targets, while a controller SIGKILLs executors and
// interpreters at random moments and at every fault point, SIGKILLs and restarts the nats-server,
// and SIGSTOPs an interpreter past its lease. Then it checks that nothing was lost and nothing
// happened twice, prints the table, and exits non-zero on any violation.
//
//   node test/chaos/drill.mjs [--jobs 10000] [--kills 500] [--nats-restarts 5] [--seed N] [--json]
//                             [--approvals]
//
// With --approvals, every commit to docs (half the jobs) needs a person's approval
// (docs/approvals.md): the controller approves or rejects each waiting run at random (3 in 4
// approved), and the checks add that every approved effect is applied once and no effect of a
// rejected run ever is.
//
// The seed fixes the schedule (which process, which fault point, when); pass it back to replay it.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { decideApproval, enqueueJob } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { isIdemError, parseConfig, systemClock } from "@idem/schema";
import { startNatsServer } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { rng, sleep } from "./lib/drill-kit.mjs";
import { createSupervisor } from "./lib/supervisor.mjs";
import { createTeardown, endThroughTeardown } from "./lib/teardown.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const IDEM = join(here, "../../apps/cli/bin/idem.js");
const { values: args } = parseArgs({
  options: {
    jobs: { type: "string", default: "10000" },
    kills: { type: "string", default: "500" },
    "nats-restarts": { type: "string", default: "5" },
    seed: { type: "string" },
    json: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    "timeout-s": { type: "string", default: "1500" },
    approvals: { type: "boolean", default: false },
  },
});
const APPROVALS = args.approvals;
const JOBS = Number(args.jobs);
const KILLS = Number(args.kills);
const NATS_RESTARTS = Number(args["nats-restarts"]);
const SEED = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(args.seed);
const AGENTS = ["writer", "reviewer", "planner", "tester", "scribe"];
const LEASE_MS = 3000;

const random = rng(SEED);
const log = (...m) =>
  process.stderr.write(`[drill ${new Date().toISOString().slice(11, 23)}] ${m.join(" ")}\n`);

const git = (cwd, ...a) => execFileSync("git", a, { cwd, encoding: "utf8", maxBuffer: 1 << 28 });

function makeRepo(path) {
  mkdirSync(path, { recursive: true });
  git(path, "init", "-q", "-b", "main");
  git(path, "config", "user.name", "drill");
  git(path, "config", "user.email", "drill@localhost");
  writeFileSync(join(path, "README.md"), "drill\n");
  git(path, "add", "README.md");
  git(path, "commit", "-q", "-m", "init");
}

const AGENT_SCRIPT = `// A drill agent: counts its runs (a line per run, with the time) and answers non-deterministically.
import { appendFileSync, readFileSync } from "node:fs";
const [name, counters] = process.argv.slice(2);
const job = JSON.parse(readFileSync(0, "utf8"));
appendFileSync(counters + "/" + name + ".log", job.jobId + " " + Date.now() + "\\n");
const n = Number(job.input.n);
const nonce = Math.random().toString(36).slice(2);
await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 15)));
process.stdout.write(JSON.stringify({
  summary: name + " did " + job.jobId + " (" + nonce + ")",
  effects: [
    { kind: "git.commit", repo: n % 2 ? "site" : "docs", message: name + ": " + job.jobId,
      files: [{ path: name + "/" + job.jobId + ".txt", content: nonce + "\\n" }] },
    { kind: "file.write", root: "out-" + name, path: job.jobId + ".json", content: JSON.stringify({ job: job.jobId, nonce }) },
  ],
}));
`;

async function main() {
  const work = mkdtempSync(join(tmpdir(), "idem-drill-"));
  log(
    `seed ${SEED}, ${JOBS} jobs, ${KILLS} kills, ${NATS_RESTARTS} nats restarts, workspace ${work}`,
  );
  log(`run ${teardown.runId}`);
  const nats = await startNatsServer();
  teardown.add("nats", () => nats.stop());
  const counters = join(work, "counters");
  mkdirSync(counters);
  for (const a of AGENTS) mkdirSync(join(work, `out-${a}`));
  makeRepo(join(work, "repos/site"));
  makeRepo(join(work, "repos/docs"));
  writeFileSync(join(work, "agent.mjs"), AGENT_SCRIPT);
  const configObject = {
    journal: { path: "journal.db" },
    repos: { site: { path: "repos/site" }, docs: { path: "repos/docs" } },
    roots: Object.fromEntries(AGENTS.map((a) => [`out-${a}`, { path: `out-${a}` }])),
    agents: Object.fromEntries(
      AGENTS.map((a) => [
        a,
        { command: [process.execPath, join(work, "agent.mjs"), a, counters], timeoutMs: 3000 },
      ]),
    ),
    queue: { ackWaitMs: 3000, maxDeliver: 50, backoffMs: [200, 1000], maxAckPending: 4 },
    nats: {
      url: nats.url,
      duplicateWindowMs: 600_000,
      maxAgeMs: 3_600_000,
      publishRetryMs: 120_000,
    },
    interpreter: {
      leaseMs: LEASE_MS,
      pollMs: 50,
      maxAttempts: 50,
      maxLeaseExpiries: 10_000,
      backoffMs: [100, 500],
    },
    api: { port: 0 },
    ...(APPROVALS && {
      approvals: { rules: [{ name: "docs", kind: "git.commit", repo: "docs" }] },
    }),
  };
  const configFile = join(work, "idem.config.json");
  writeFileSync(configFile, JSON.stringify(configObject, null, 2));
  const parsed = parseConfig(configObject, { dir: work });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;

  // --- processes under the controller ---------------------------------------------------------
  // Two "hosts" on this machine, sharing the one workspace and config: an executor and an
  // interpreter each, restarted after every exit and armed at random with a fault point.
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
  const { procs, tally, kills } = sup;
  let natsRestarts = 0;
  let stops = 0;

  // --- enqueue ---------------------------------------------------------------------------------
  const journal = await openSqliteJournal(config.journal.path, { synchronous: "FULL" });
  const nc = await connectNats(nats.url, "drill");
  await ensureJobsStream(await jetstreamManager(nc), config.nats);
  const publisher = createJobPublisher({ js: jetstream(nc), nats: config.nats });
  let streamDuplicates = 0;
  const t0 = Date.now();
  sup.startAll([1, 2].map((n) => ({ name: `host-${n}`, dir: work, configFile })));
  const jobIds = [];
  const enqueueAll = (async () => {
    for (let i = 0; i < JOBS; i++) {
      const job = {
        jobId: `job-${String(i).padStart(6, "0")}`,
        agent: AGENTS[i % AGENTS.length],
        input: { n: i },
      };
      jobIds.push(job.jobId);
      await enqueueJob(job, { journal, publisher, actor: "drill" });
      // An orchestrator that retries: every 50th job is published again under the same msg id.
      if (i % 50 === 0) {
        const again = await publisher.publish(job);
        if (again.duplicate) streamDuplicates += 1;
      }
    }
    log(`enqueued ${JOBS} jobs in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  })();

  // --- approvals: a person approves or rejects each waiting run, at random -----------------------
  const approved = new Set();
  const rejected = new Set();
  async function decideWaiting() {
    for (const w of await journal.approvals.awaiting(50)) {
      const approve = random() < 0.75;
      try {
        await decideApproval(journal, config.approvals, systemClock, {
          jobId: w.jobId,
          approve,
          reason: approve ? "drill: looks right" : "drill: not this one",
          actor: "drill",
        });
        (approve ? approved : rejected).add(w.jobId);
      } catch (e) {
        if (!isIdemError(e, "INVALID_STATE")) throw e;
      }
    }
  }

  // --- chaos -----------------------------------------------------------------------------------
  const deadline = Date.now() + Number(args["timeout-s"]) * 1000;
  const natsAt = Array.from({ length: NATS_RESTARTS }, (_, i) => (i + 1) / (NATS_RESTARTS + 1));
  let sigstopDone = false;
  let done = false;
  let lastProgress = 0;
  while (!done) {
    if (Date.now() > deadline) throw new Error("the drill timed out");
    if (tally.otherExits > 20) {
      throw new Error(
        `processes keep exiting by themselves; see ${logFile}:\n${readFileSync(logFile, "utf8")
          .split("\n")
          .filter((l) => !l.includes('"level":30'))
          .slice(-10)
          .join("\n")}`,
      );
    }
    await sleep(100 + Math.floor(random() * 400));
    const s = await journal.status();
    const progress = s.outputs / JOBS;
    if (
      s.outputs !== lastProgress &&
      Math.floor(progress * 10) !== Math.floor((lastProgress / JOBS) * 10)
    ) {
      log(
        `outputs ${s.outputs}/${JOBS}, runs done ${s.runs.done}, kills ${kills()}, nats restarts ${natsRestarts}`,
      );
    }
    lastProgress = s.outputs;
    if (APPROVALS && s.runs.awaiting > 0) await decideWaiting();
    const active = s.runs.pending + s.runs.running + s.runs.failed + s.runs.awaiting;
    if (s.outputs >= JOBS && active === 0 && kills() >= KILLS && natsRestarts >= NATS_RESTARTS) {
      done = true;
      break;
    }
    if (natsAt.length > 0 && progress >= natsAt[0]) {
      natsAt.shift();
      log("SIGKILL nats-server");
      await nats.kill("SIGKILL");
      await sleep(300 + Math.floor(random() * 700));
      await nats.restart();
      natsRestarts += 1;
      continue;
    }
    if (natsAt.length > 0 && s.outputs >= JOBS) {
      // Finished before the planned restarts: do the rest now.
      natsAt[0] = 0;
      continue;
    }
    if (!sigstopDone && progress > 0.3) {
      sigstopDone = true;
      const p = procs.get("host-1/interpreter");
      log("SIGSTOP host-1/interpreter past its lease");
      p.child.kill("SIGSTOP");
      stops += 1;
      await sleep(LEASE_MS * 2);
      p.child.kill("SIGCONT");
      log("SIGCONT host-1/interpreter");
      continue;
    }
    // Kill at random moments until the kill budget is spent; after that only faults still fire.
    // Spread the kill budget over the run: ahead of schedule, hold back.
    const due = KILLS * Math.min(1, 0.05 + progress * 1.1);
    if (kills() < KILLS && (kills() < due || s.outputs >= JOBS) && random() < 0.7) {
      sup.killOne();
    }
  }
  await enqueueAll;
  const elapsed = (Date.now() - t0) / 1000;
  await sup.stopAll();
  await nc.drain();

  // --- checks ----------------------------------------------------------------------------------
  const violations = [];
  const status = await journal.status();
  const events = await journal.events.count([
    "redelivery.skipped",
    "output.conflict",
    "output.duplicate",
  ]);
  const outputs = new Map();
  for (const id of jobIds) {
    const o = await journal.outputs.get(id);
    if (o) outputs.set(id, o);
  }
  const lost = jobIds.filter((id) => !outputs.has(id));
  // Agent runs, from the agents' own counters: none may start after the job's output was recorded.
  const runs = new Map();
  const lateRuns = [];
  for (const a of AGENTS) {
    const f = join(counters, `${a}.log`);
    if (!existsSync(f)) continue;
    for (const line of readFileSync(f, "utf8").split("\n")) {
      if (!line) continue;
      const [id, at] = line.split(" ");
      runs.set(id, (runs.get(id) ?? 0) + 1);
      const o = outputs.get(id);
      if (o && Number(at) > o.recordedAt) lateRuns.push(id);
    }
  }
  const runCounts = [...runs.values()];
  // Effects at the targets: count each key's trailers on both branches, and check every file.
  const trailers = new Map();
  for (const repo of ["site", "docs"]) {
    const logText = git(
      join(work, "repos", repo),
      "log",
      "--format=%(trailers:key=Idem-Effect,valueonly)",
      "main",
    );
    for (const key of logText.split("\n").filter(Boolean))
      trailers.set(key, (trailers.get(key) ?? 0) + 1);
  }
  const duplicateKeys = [...trailers].filter(([, n]) => n > 1);
  let missingEffects = 0;
  let rejectedApplied = 0;
  for (const [id, o] of outputs) {
    const fw = o.output.effects[1];
    const file = join(work, `out-${o.agent}`, fw.path);
    if (rejected.has(id)) {
      // A rejected run stopped before its first effect (the commit to docs): nothing of it, ever.
      if (trailers.has(`${id}/0`)) rejectedApplied += 1;
      if (existsSync(file)) rejectedApplied += 1;
      continue;
    }
    if (!trailers.has(`${id}/0`)) missingEffects += 1;
    if (!existsSync(file) || readFileSync(file, "utf8") !== fw.content) missingEffects += 1;
  }
  const deadRejected = status.runs.dead === rejected.size;
  const row = (name, value, ok) => ({ name, value, ok });
  const table = [
    row("jobs enqueued", jobIds.length, jobIds.length === JOBS),
    row(
      "duplicates dropped by the stream",
      streamDuplicates,
      streamDuplicates === Math.ceil(JOBS / 50),
    ),
    row("redeliveries skipped by the journal", events["redelivery.skipped"], true),
    row(
      "agent runs (total)",
      runCounts.reduce((a, b) => a + b, 0),
      true,
    ),
    row("agent runs per job (max)", Math.max(0, ...runCounts), true),
    row("agent runs after the output was recorded", lateRuns.length, lateRuns.length === 0),
    row("outputs recorded (one per job)", status.outputs, status.outputs === JOBS),
    row("conflicting outputs refused", events["output.conflict"], events["output.conflict"] === 0),
    row("effects applied", status.effects.applied, true),
    row("effects found present", status.effects.present, true),
    row("runs done", status.runs.done, status.runs.done === JOBS - rejected.size),
    row("runs dead (rejected ones only)", status.runs.dead, deadRejected),
    ...(APPROVALS
      ? [
          row("runs approved by a person", approved.size, true),
          row("runs rejected by a person", rejected.size, true),
          row("effects of rejected runs applied", rejectedApplied, rejectedApplied === 0),
          row("runs still awaiting approval", status.runs.awaiting, status.runs.awaiting === 0),
        ]
      : []),
    row("dead letters", status.deadLetters, status.deadLetters === 0),
    row("duplicate effects at targets", duplicateKeys.length, duplicateKeys.length === 0),
    row("missing effects at targets", missingEffects, missingEffects === 0),
    row("lost jobs", lost.length, lost.length === 0),
    row(
      "kills (controller SIGKILL + fault points)",
      `${kills()} (${tally.controllerKills} + ${tally.faultKills})`,
      kills() >= KILLS,
    ),
    row("nats-server SIGKILL + restart", natsRestarts, natsRestarts >= NATS_RESTARTS),
    row("interpreter SIGSTOP past its lease", stops, stops >= 1),
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
        .map(([k, n]) => `${k} x${n}`)
        .join(", ")}`,
    );
  if (lost.length) violations.push(`lost: ${lost.slice(0, 10).join(", ")}`);
  await journal.close();
  await teardown.run();

  if (args.json)
    process.stdout.write(`${JSON.stringify({ seed: SEED, table, violations }, null, 2)}\n`);
  else {
    const w = Math.max(...table.map((r) => r.name.length));
    process.stdout.write(`\nidem chaos drill, seed ${SEED}\n`);
    for (const r of table)
      process.stdout.write(
        `  ${r.name.padEnd(w)}  ${String(r.value).padStart(12)}  ${r.ok ? "ok" : "VIOLATION"}\n`,
      );
    process.stdout.write(
      violations.length
        ? `\n${violations.length} violation(s):\n  ${violations.join("\n  ")}\n`
        : "\nno violations\n",
    );
  }
  if (args.keep || violations.length) log(`workspace kept at ${work}`);
  else rmSync(work, { recursive: true, force: true });
  process.exit(violations.length ? 1 : 0);
}

/** Every child still running: the supervisor's, killed by the teardown before anything else. */
const children = new Set();
/** However the drill ends, nothing of it outlives it (lib/teardown.mjs). */
const teardown = createTeardown({ log });
const abandon = endThroughTeardown(teardown, log);
main().catch((e) => abandon(`drill failed: ${e?.stack ?? e}`));
