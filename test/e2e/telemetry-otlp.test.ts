// Traces over OTLP/HTTP from the real CLI processes (`idem enqueue`, `idem executor`,
// `idem interpreter`) to a local receiver named by OTEL_EXPORTER_OTLP_ENDPOINT: one trace per job
// across the three processes. With the receiver down, jobs go on as if telemetry were off.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { type ReceivedSpan, startOtlpReceiver } from "../../packages/runtime/test/otlp-receiver.js";
import {
  createWorkspace,
  IDEM_BIN,
  openWorkspaceJournal,
  REPO_ROOT,
  type Workspace,
} from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
}, 180_000);

/** An agent command: answers each job with one file.write of its own. */
const AGENT = `
let text = "";
process.stdin.on("data", (d) => (text += d)).on("end", () => {
  const job = JSON.parse(text);
  process.stdout.write(JSON.stringify({
    summary: "traced",
    effects: [{ kind: "file.write", root: "outbox", path: job.jobId + ".txt", content: "done " + job.jobId + "\\n" }],
  }));
});
`;

async function workspace(path: string): Promise<Workspace> {
  const agent = join(path, "agent.mjs");
  writeFileSync(agent, AGENT);
  return createWorkspace(path, {}, { agents: { writer: { command: [process.execPath, agent] } } });
}

interface Child {
  process: ChildProcess;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(ws: Workspace, env: NodeJS.ProcessEnv, ...args: string[]): Child {
  const child = spawn(process.execPath, [IDEM_BIN, ...args, "--config", ws.configFile], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { process: child, stderr: () => stderr, exited };
}

async function enqueue(ws: Workspace, env: NodeJS.ProcessEnv, jobId: string): Promise<void> {
  const file = join(ws.dir, `${jobId}.json`);
  writeFileSync(file, JSON.stringify({ jobId, agent: "writer", input: { n: 1 } }));
  await run(process.execPath, [IDEM_BIN, "enqueue", file, "--config", ws.configFile], { env });
}

async function waitFor(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Runs executor and interpreter until the job's effect is at its target and its run is done. */
async function processJob(ws: Workspace, env: NodeJS.ProcessEnv, jobId: string) {
  const executor = start(ws, env, "executor", "--no-api");
  const interpreter = start(ws, env, "interpreter");
  const journal = await openWorkspaceJournal(ws);
  try {
    await enqueue(ws, env, jobId);
    await waitFor(`${jobId}'s effect`, () => existsSync(join(ws.outboxPath, `${jobId}.txt`)));
    await waitFor(
      `${jobId}'s run`,
      async () => (await journal.runs.latest(jobId))?.state === "done",
    );
  } finally {
    await journal.close();
    executor.process.kill("SIGTERM");
    interpreter.process.kill("SIGTERM");
  }
  return {
    executor: await executor.exited,
    interpreter: await interpreter.exited,
    stderr: executor.stderr() + interpreter.stderr(),
  };
}

const baseEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn", NO_COLOR: "1" };
  for (const k of Object.keys(env)) if (k.startsWith("OTEL_") || k === "NATS_URL") delete env[k];
  return env;
};

describe("traces over OTLP/HTTP from the idem processes", () => {
  it("exports one trace per job from enqueue, executor and interpreter, its spans carrying the job ID", async () => {
    await using dir = await tempDir("idem-otlp-");
    await using receiver = await startOtlpReceiver();
    const ws = await workspace(dir.path);
    const env = { ...baseEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    const ended = await processJob(ws, env, "otlp-1");
    expect(ended.executor, ended.stderr).toEqual({ code: 0, signal: null });
    expect(ended.interpreter, ended.stderr).toEqual({ code: 0, signal: null });
    // Each process exported its spans before it exited (the stop flushes them).
    const spans = receiver.spans.filter((s) => s.attributes["idem.job_id"] === "otlp-1");
    const names = new Set(spans.map((s) => s.name));
    for (const name of [
      "idem.enqueue",
      "idem.delivery",
      "idem.agent.run",
      "idem.record",
      "idem.claim",
      "idem.probe",
      "idem.apply",
    ]) {
      expect(names, name).toContain(name);
    }
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(new Set(spans.map((s) => s.service))).toEqual(
      new Set(["idem-enqueue", "idem-executor", "idem-interpreter"]),
    );
    const byName = (name: string) => spans.find((s) => s.name === name) as ReceivedSpan;
    expect(byName("idem.claim").parentSpanId).toBe(byName("idem.record").spanId);
    expect(byName("idem.apply").attributes["idem.effect_key"]).toBe("otlp-1/0");
    expect(receiver.requests.every((r) => r.path === "/v1/traces")).toBe(true);
    expect(receiver.requests.every((r) => r.contentType === "application/json")).toBe(true);
  }, 180_000);

  it("runs the job as usual when the receiver is down, stops promptly, and logs no credential", async () => {
    await using dir = await tempDir("idem-otlp-down-");
    const receiver = await startOtlpReceiver();
    await receiver.close(); // nothing listens there any more
    const ws = await workspace(dir.path);
    const env = {
      ...baseEnv(),
      IDEM_LOG_LEVEL: "info",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url.replace("//", "//otel:url-s3cret@"),
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=header-s3cret",
    };
    const ended = await processJob(ws, env, "otlp-down");
    expect(ended.executor, ended.stderr).toEqual({ code: 0, signal: null });
    expect(ended.interpreter, ended.stderr).toEqual({ code: 0, signal: null });
    expect(ended.stderr).toContain("traces exported over OTLP/HTTP");
    expect(ended.stderr).not.toContain("s3cret");
    const journal = await openWorkspaceJournal(ws);
    try {
      expect((await journal.outputs.get("otlp-down"))?.traceparent).toMatch(/^00-[0-9a-f]{32}-/);
      expect((await journal.runs.latest("otlp-down"))?.state).toBe("done");
    } finally {
      await journal.close();
    }
  }, 180_000);
});
