// The server killed (issue 18): two `idem executor` processes and one `idem interpreter` on a
// disposable PostgreSQL, 60 jobs with a git.commit and a file.write each, on each transport: the
// embedded queue (the jobs table) and JetStream (a nats-server of the test's own).
// Mid-run the PostgreSQL server is SIGKILLed, left down longer than every lease, and started again.
// Afterwards: one output per job, every agent run before its job's output was recorded and one run
// per job (the executor kept each output in memory and recorded it once the server was back), no
// refused second output, every effect once at its target, every run done, and the three processes
// still running: none was restarted by the test. On JetStream, "nothing acked that was not
// committed" is what the single agent run per job shows: a message acked before its record
// committed would be gone with its output, and a message redelivered after a lost record runs the
// agent again.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { PostgresJournalStore } from "@idem/journal";
import type { AgentOutput } from "@idem/schema";
import { startNatsServer, startPostgres, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLEAN,
  createWorkspace,
  IDEM_BIN,
  REPO_ROOT,
  sleep,
  verify,
  waitFor,
} from "./interpreter-fixture.js";

const execFileP = promisify(execFile);
const JOBS = 60;
const LEASE_MS = 2_000;

/** Logs each run (job, pid, start time) and answers with a random nonce: a second run differs. */
const AGENT = `
import { appendFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
const started = Date.now();
let text = "";
process.stdin.on("data", (d) => (text += d)).on("end", () => {
  const job = JSON.parse(text);
  appendFileSync(process.env.RUNS_LOG, job.jobId + " " + process.pid + " " + started + "\\n");
  const nonce = randomUUID();
  setTimeout(() => process.stdout.write(JSON.stringify({
    effects: [
      { kind: "file.write", root: "outbox", path: job.jobId + ".txt", content: nonce + "\\n" },
      { kind: "git.commit", repo: "site", message: job.jobId, files: [{ path: job.jobId + ".txt", content: nonce + "\\n" }] },
    ],
  })), 50 + Math.floor(Math.random() * 250));
});
`;

let pg: Awaited<ReturnType<typeof startPostgres>>;
beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

const env = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn", NO_COLOR: "1", ...extra };
  for (const k of Object.keys(e)) if (k.startsWith("OTEL_") || k === "NATS_URL") delete e[k];
  delete e.IDEM_JOURNAL_URL;
  return e;
};

function start(args: string[], extra: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [IDEM_BIN, ...args], {
    env: env(extra),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  return { child, stderr: () => stderr };
}

/** The drill on one transport: `nats` adds a `nats` section (JetStream) to the workspace's config. */
async function serverKillDrill(db: string, nats?: { url: string }): Promise<void> {
  await using dir = await tempDir("idem-pg-kill-");
  const url = await pg.createDatabase(db);
  const agent = join(dir.path, "agent.mjs");
  writeFileSync(agent, AGENT);
  const runsLog = join(dir.path, "runs.log");
  appendFileSync(runsLog, "");
  const ws = await createWorkspace(
    dir.path,
    { leaseMs: LEASE_MS, pollMs: 50 },
    {
      journal: { url },
      agents: { writer: { command: [process.execPath, agent] } },
      queue: { ackWaitMs: LEASE_MS, maxDeliver: 20, backoffMs: [100] },
      ...(nats ? { nats: { url: nats.url, stream: "KILL_JOBS", subjectPrefix: "kill" } } : {}),
    },
  );
  const jobs = Array.from({ length: JOBS }, (_, i) => ({
    jobId: `k-${i}`,
    agent: "writer",
    input: { i },
  }));
  writeFileSync(join(dir.path, "jobs.json"), JSON.stringify(jobs));
  await execFileP(
    process.execPath,
    [IDEM_BIN, "enqueue", join(dir.path, "jobs.json"), "--config", ws.configFile],
    { env: env({}) },
  );
  const procs = [
    start(["executor", "--no-api", "--config", ws.configFile], { RUNS_LOG: runsLog }),
    start(["executor", "--no-api", "--config", ws.configFile], { RUNS_LOG: runsLog }),
    start(["interpreter", "--config", ws.configFile], {}),
  ];
  const journal = await PostgresJournalStore.open(url, { max: 2 });
  try {
    await waitFor(
      "a first part of the outputs",
      async () => {
        const s = await journal.status();
        return s.outputs >= 10;
      },
      { timeoutMs: 240_000, ignoreErrors: true, intervalMs: 100 },
    );
    await pg.kill();
    // Down for longer than every lease (jobs' and runs'): leases lapse by the server's clock.
    await sleep(3 * LEASE_MS);
    await pg.restart();
    await waitFor(
      `${JOBS} outputs and every run done`,
      async () => {
        const s = await journal.status();
        if (s.outputs < JOBS) return false;
        const a = await journal.runs.active();
        return a.pending + a.running + a.failed === 0;
      },
      { timeoutMs: 240_000, ignoreErrors: true, intervalMs: 100 },
    );
    for (const p of procs) expect(p.child.exitCode, p.stderr()).toBeNull();
    const outputs: AgentOutput[] = [];
    const recordedAt = new Map<string, number>();
    for (const j of jobs) {
      const r = await journal.outputs.get(j.jobId);
      expect(r, j.jobId).toBeDefined();
      if (!r) continue;
      outputs.push(r.output);
      recordedAt.set(j.jobId, r.recordedAt);
    }
    const runs = readFileSync(runsLog, "utf8").trim().split("\n");
    const perJob = new Map<string, number>();
    const late: string[] = [];
    for (const line of runs) {
      const [jobId = "", , at = "0"] = line.split(" ");
      perJob.set(jobId, (perJob.get(jobId) ?? 0) + 1);
      if (Number(at) > (recordedAt.get(jobId) ?? Number.POSITIVE_INFINITY)) late.push(line);
    }
    expect(late, "agent runs after the output was recorded").toEqual([]);
    const twice = [...perJob].filter(([, n]) => n > 1).map(([j, n]) => `${j} x${n}`);
    expect(twice, "agents run again for a job").toEqual([]);
    expect(perJob.size).toBe(JOBS);
    expect(await journal.outputs.rejections()).toEqual([]);
    expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
    expect(await journal.deadLetters.list()).toEqual([]);
    // On JetStream every job went through the stream (its sequence noted at publish).
    if (nats)
      for (const j of jobs)
        expect((await journal.jobs.get(j.jobId))?.streamSeq, j.jobId).toEqual(expect.any(Number));
  } finally {
    await journal.close();
    for (const p of procs) p.child.kill("SIGTERM");
  }
}

describe("the PostgreSQL server killed mid-run", () => {
  it("embedded queue: loses no job, runs no agent twice, applies every effect once, and every process recovers by itself", async () => {
    await serverKillDrill("server_kill");
  }, 600_000);

  it("JetStream: loses no job, acks nothing uncommitted (no agent runs twice), applies every effect once, and every process recovers by itself", async () => {
    await using nats = await startNatsServer();
    await serverKillDrill("server_kill_js", { url: nats.url });
  }, 600_000);
});
