// The real CLI on a PostgreSQL journal (journal.url): the same steps, JSON shapes and exit codes as
// on SQLite, and two executors in two working directories sharing one PostgreSQL queue.
import { execFile, execFileSync, spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { PostgresJournalStore } from "@idem/journal";
import { startPostgres, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createWorkspace,
  IDEM_BIN,
  REPO_ROOT,
  type Workspace,
} from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);
let pg: Awaited<ReturnType<typeof startPostgres>>;
let databases = 0;

beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

const env = (): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn", NO_COLOR: "1", USER: "t" };
  for (const k of Object.keys(e)) if (k.startsWith("OTEL_") || k === "NATS_URL") delete e[k];
  delete e.IDEM_JOURNAL_URL;
  return e;
};

async function idem(ws: Workspace, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [IDEM_BIN, ...args, "--config", ws.configFile],
      { env: env() },
    );
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** An agent answering each job with one file.write, logging each run to runs.log beside it. */
const AGENT = `
import { appendFileSync } from "node:fs";
let text = "";
process.stdin.on("data", (d) => (text += d)).on("end", () => {
  const job = JSON.parse(text);
  appendFileSync(process.env.RUNS_LOG, job.jobId + "\\n");
  process.stdout.write(JSON.stringify({
    effects: [{ kind: "file.write", root: "outbox", path: job.jobId + ".txt", content: "ran " + job.jobId + "\\n" }],
  }));
});
`;

async function workspace(dir: string, journal: Record<string, unknown>): Promise<Workspace> {
  const agent = join(dir, "agent.mjs");
  writeFileSync(agent, AGENT);
  return createWorkspace(
    dir,
    {},
    { journal, agents: { writer: { command: [process.execPath, agent] } } },
  );
}

/** The shape of a JSON value: keys and types, not values (times and hashes differ per run). */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? [] : [shape(v[0])];
  if (v !== null && typeof v === "object")
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    );
  return v === null ? "null" : typeof v;
}

async function waitFor(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function startExecutor(ws: Workspace, runsLog: string) {
  const child = spawn(
    process.execPath,
    [IDEM_BIN, "executor", "--no-api", "--config", ws.configFile],
    {
      env: { ...env(), RUNS_LOG: runsLog },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return {
    stderr: () => stderr,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** The steps of the issue, in order; each step's exit code and JSON (or its shape). */
async function steps(ws: Workspace) {
  const out: Record<string, unknown> = {};
  const output = {
    jobId: "sub-1",
    agent: "writer",
    effects: [
      { kind: "file.write", root: "outbox", path: "sub-1.txt", content: "one\n" },
      {
        kind: "git.commit",
        repo: "site",
        message: "sub-1",
        files: [{ path: "sub-1.txt", content: "one\n" }],
      },
    ],
  };
  writeFileSync(join(ws.dir, "out.json"), JSON.stringify(output));
  const submit = await idem(ws, "submit", join(ws.dir, "out.json"), "--json");
  out.submit = { code: submit.code, json: shape(JSON.parse(submit.stdout)) };

  const runsLog = join(ws.dir, "runs.log");
  const executor = startExecutor(ws, runsLog);
  writeFileSync(
    join(ws.dir, "job.json"),
    JSON.stringify({ jobId: "job-1", agent: "writer", input: {} }),
  );
  const enqueue = await idem(ws, "enqueue", join(ws.dir, "job.json"), "--json");
  out.enqueue = { code: enqueue.code, json: shape(JSON.parse(enqueue.stdout)) };
  await waitFor(
    "job-1 recorded",
    async () => (await idem(ws, "show", "job-1", "--json")).code === 0,
  );
  out.executor = await executor.stop();
  out.agentRuns = readFileSync(runsLog, "utf8").trim().split("\n");

  const interp = await idem(ws, "interpreter", "--once");
  out.interpreter = interp.code;
  out.applied = [
    existsSync(join(ws.outboxPath, "sub-1.txt")),
    existsSync(join(ws.outboxPath, "job-1.txt")),
    execFileSync("git", ["log", "--format=%s", "-1"], {
      cwd: ws.repoPath,
      encoding: "utf8",
    }).trim(),
  ];
  const status = await idem(ws, "status", "--json");
  out.status = { code: status.code, json: JSON.parse(status.stdout) };
  const show = await idem(ws, "show", "sub-1", "--json");
  out.show = { code: show.code, json: shape(JSON.parse(show.stdout)) };
  const replay = await idem(ws, "replay", "--job", "sub-1", "--dry-run", "--json");
  out.replay = { code: replay.code, json: shape(JSON.parse(replay.stdout)) };
  out.audit = (await idem(ws, "audit")).code;
  const dlq = await idem(ws, "dlq", "ls", "--json");
  out.dlq = { code: dlq.code, json: JSON.parse(dlq.stdout) };
  const backup = await idem(ws, "backup", join(ws.dir, "journal.backup"), "--json");
  out.backup = { code: backup.code, json: shape(JSON.parse(backup.stdout)), err: backup.stderr };
  // The dry run and the audit wrote nothing: the same counts as before them.
  out.statusAfter = JSON.parse((await idem(ws, "status", "--json")).stdout);
  return out;
}

describe("the CLI on a PostgreSQL journal", () => {
  it("answers every step with the same exit codes and JSON shapes as on SQLite", async () => {
    await using sqliteDir = await tempDir("idem-pg-e2e-sqlite-");
    await using pgDir = await tempDir("idem-pg-e2e-pg-");
    const url = await pg.createDatabase(`e2e_${++databases}`);
    const onSqlite = await steps(await workspace(sqliteDir.path, { path: ".idem/journal.db" }));
    const onPostgres = await steps(await workspace(pgDir.path, { url }));
    expect(onSqlite.submit).toMatchObject({ code: 0 });
    expect(onSqlite.agentRuns).toEqual(["job-1"]);
    expect(onSqlite.applied).toEqual([true, true, "sub-1"]);
    expect(onSqlite.audit).toBe(0);
    expect((onPostgres.backup as { code: number; err: string }).err).not.toContain("password");
    expect({ ...onPostgres, backup: undefined }).toEqual({ ...onSqlite, backup: undefined });
    expect((onPostgres.backup as { code: number }).code).toBe(0);
    expect((onPostgres.backup as { json: unknown }).json).toEqual(
      (onSqlite.backup as { json: unknown }).json,
    );
    // The PostgreSQL backup is a pg_dump custom-format archive.
    expect(readFileSync(join(pgDir.path, "journal.backup")).subarray(0, 5).toString()).toBe(
      "PGDMP",
    );
  });

  it("shares one queue between two executors in two working directories: each job runs once", async () => {
    await using a = await tempDir("idem-pg-e2e-a-");
    await using b = await tempDir("idem-pg-e2e-b-");
    const url = await pg.createDatabase(`e2e_${++databases}`);
    const wsA = await workspace(a.path, { url });
    const wsB = await workspace(b.path, { url });
    const runsLog = join(a.path, "shared-runs.log");
    appendFileSync(runsLog, "");
    const n = 24;
    const jobs = Array.from({ length: n }, (_, i) => ({
      jobId: `q-${i}`,
      agent: "writer",
      input: { i },
    }));
    writeFileSync(join(a.path, "jobs.json"), JSON.stringify(jobs));
    const enqueued = await idem(wsA, "enqueue", join(a.path, "jobs.json"), "--json");
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const ex = [startExecutor(wsA, runsLog), startExecutor(wsB, runsLog)];
    const journal = await PostgresJournalStore.open(url);
    try {
      await waitFor(`${n} outputs`, async () => (await journal.status()).outputs === n);
    } finally {
      await journal.close();
      const codes = await Promise.all(ex.map((e) => e.stop()));
      expect(codes, ex.map((e) => e.stderr()).join("\n")).toEqual([0, 0]);
    }
    const ran = readFileSync(runsLog, "utf8").trim().split("\n").sort();
    expect(ran).toEqual(jobs.map((j) => j.jobId).sort());
  });
});
