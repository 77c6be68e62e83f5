// examples/client-agent against the real thing: the built `idem` CLI in a child process, a journal
// made by `idem init`, the embedded queue or a nats-server of @idem/testing, the executor's HTTP
// API, and the built @idem/client (the examples are plain JavaScript run by node).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createClient, isIdemClientError } from "@idem/client";
import { startNatsServer, tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const IDEM_BIN = join(REPO_ROOT, "apps/cli/bin/idem.js");
const AGENT = join(REPO_ROOT, "examples/client-agent/agent.mjs");
const ENQUEUE = join(REPO_ROOT, "examples/client-agent/enqueue.mjs");
const TOKEN = "client-example-token";
/** A generous bound for what a busy machine does in well under a second: never an assertion. */
const PATIENCE_MS = 120_000;

const run = promisify(execFile);

function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ["IDEM_CONFIG", "NATS_URL", "IDEM_FAULT", "IDEM_TOKEN", "IDEM_URL"])
    delete env[name];
  return { ...env, ...extra };
}

/** `idem init`, then an outbox root, a command agent `writer`, the API token and NATS if given. */
async function createWorkspace(dir: string, natsUrl?: string): Promise<void> {
  await run(process.execPath, [IDEM_BIN, "init"], { cwd: dir, env: childEnv() });
  const configFile = join(dir, "idem.config.json");
  const config = JSON.parse(readFileSync(configFile, "utf8")) as Record<string, unknown>;
  config.roots = { outbox: { path: "outbox" } };
  const agent =
    "process.stdout.write(JSON.stringify({ summary: 'enqueued over HTTP', effects: [] }))";
  config.agents = { writer: { command: [process.execPath, "-e", agent], timeoutMs: PATIENCE_MS } };
  config.api = { ...(config.api as object), token: TOKEN };
  if (natsUrl) config.nats = { url: natsUrl };
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  mkdirSync(join(dir, "outbox"));
}

/** `idem executor --port 0`, with its API URL read from its log; stopped with SIGTERM. */
async function startExecutor(cwd: string) {
  const child: ChildProcess = spawn(process.execPath, [IDEM_BIN, "executor", "--port", "0"], {
    cwd,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no API URL in the log:\n${log}`)), PATIENCE_MS);
    const look = (d: Buffer) => {
      log += d.toString("utf8");
      const m = /"?url"?\W+(http:\/\/[0-9.]+:\d+)/.exec(log);
      if (m?.[1]) {
        clearTimeout(timer);
        res(m[1]);
      }
    };
    child.stdout?.on("data", look);
    child.stderr?.on("data", look);
    child.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`idem executor exited with ${code}:\n${log}`));
    });
  });
  return {
    url,
    log: () => log,
    async [Symbol.asyncDispose]() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

beforeAll(() => {
  for (const built of ["apps/cli/dist/main.js", "packages/client/dist/index.js"]) {
    if (!existsSync(join(REPO_ROOT, built)))
      throw new Error(`build first (npx tsc -b): ${built} is missing`);
  }
});

describe("examples/client-agent", () => {
  it("submits to a running idem executor, retries after a forced timeout and hears duplicate, and reads its output back", async () => {
    await using dir = await tempDir("idem-example-client-");
    await createWorkspace(dir.path);
    await using executor = await startExecutor(dir.path);
    const { stdout } = await run(process.execPath, [AGENT, "client-report-1"], {
      env: childEnv({ IDEM_URL: executor.url, IDEM_TOKEN: TOKEN }),
    });
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      { step: "submit", status: "duplicate", jobId: "client-report-1" },
      { step: "get", jobId: "client-report-1", summary: "a report" },
    ]);
    const client = createClient({ baseUrl: executor.url, token: TOKEN });
    expect((await client.get("client-report-1"))?.output).toMatchObject({ agent: "reporter" });
  });

  it("fails with a typed 401 without the token, and enqueues over HTTP a job the executor then runs", async () => {
    await using dir = await tempDir("idem-example-client-enqueue-");
    await createWorkspace(dir.path);
    await using executor = await startExecutor(dir.path);
    const anonymous = await createClient({ baseUrl: executor.url })
      .status()
      .catch((e: unknown) => e);
    expect(isIdemClientError(anonymous, "UNAUTHORIZED")).toBe(true);
    const client = createClient({ baseUrl: executor.url, token: TOKEN });
    const job = { jobId: "client-job-1", agent: "writer", input: {} };
    expect(await client.enqueue(job)).toMatchObject({ stream: "embedded", duplicate: false });
    const deadline = Date.now() + PATIENCE_MS;
    let record = await client.get(job.jobId);
    while (!record && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      record = await client.get(job.jobId);
    }
    expect(record?.output, executor.log()).toMatchObject({ summary: "enqueued over HTTP" });
    expect(await client.status()).toMatchObject({ outputs: 1 });
  });

  it("enqueues onto JetStream with a JetStream client of its own (enqueue.mjs), hears duplicate the second time, and the executor runs the job", async () => {
    await using nats = await startNatsServer();
    await using dir = await tempDir("idem-example-client-nats-");
    await createWorkspace(dir.path, nats.url);
    // The executor provisions idem's jobs stream before it serves its API.
    await using executor = await startExecutor(dir.path);
    const { stdout } = await run(process.execPath, [ENQUEUE, "client-nats-1"], {
      env: childEnv({ NATS_URL: nats.url }),
    });
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const first = { jobId: "client-nats-1", stream: "IDEM_JOBS", seq: 1 };
    expect(lines).toEqual([
      { step: "enqueue", ...first, duplicate: false },
      { step: "enqueue again", ...first, duplicate: true },
    ]);
    const client = createClient({ baseUrl: executor.url, token: TOKEN });
    const deadline = Date.now() + PATIENCE_MS;
    let record = await client.get("client-nats-1");
    while (!record && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      record = await client.get("client-nats-1");
    }
    expect(record?.output, executor.log()).toMatchObject({ agent: "writer" });
  });
});
