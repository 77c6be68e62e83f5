// The agents of examples/ against the real thing: the built `idem` CLI in child processes, a
// journal made by `idem init`, the embedded queue and the executor's HTTP API.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const IDEM_BIN = join(REPO_ROOT, "apps/cli/bin/idem.js");
const EXAMPLES = join(REPO_ROOT, "examples");
/** A generous bound for what a busy machine does in well under a second: never an assertion. */
const PATIENCE_MS = 120_000;

const run = promisify(execFile);

/** The environment of every child: nothing that names another config or a NATS server. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.IDEM_CONFIG;
  delete env.NATS_URL;
  delete env.IDEM_FAULT;
  return env;
}

async function idem(
  cwd: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [IDEM_BIN, ...args], {
      cwd,
      env: childEnv(),
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/**
 * A workspace as a new user makes it: `idem init`, then the example's `roots` and `agents` (and
 * `queue`) merged into the config that init wrote, the agent and job copied beside it, the root
 * folder created. Answers the API's token: the one `idem init` wrote, unless `api` sets another.
 */
async function createWorkspace(
  dir: string,
  api: Record<string, unknown> = {},
  queue: Record<string, unknown> = {},
): Promise<string> {
  const init = await idem(dir, "init");
  expect(init.code, init.stderr).toBe(0);
  const configFile = join(dir, "idem.config.json");
  const config = JSON.parse(readFileSync(configFile, "utf8")) as Record<string, unknown>;
  const example = JSON.parse(
    readFileSync(join(EXAMPLES, "command-agent/idem.config.json"), "utf8"),
  ) as Record<string, Record<string, unknown>>;
  config.roots = example.roots;
  config.agents = example.agents;
  config.queue = { ...(config.queue as object), ...example.queue, ...queue };
  config.api = { ...(config.api as object), ...api };
  const token = (config.api as { token: string }).token;
  expect(token.length, "idem init writes a token").toBeGreaterThan(0);
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  for (const file of ["agent.mjs", "job.json"])
    copyFileSync(join(EXAMPLES, "command-agent", file), join(dir, file));
  mkdirSync(join(dir, "outbox"));
  return token;
}

/** A running `idem executor` on a free port, with its API URL read from its log. */
interface RunningExecutor extends AsyncDisposable {
  url: string;
  log(): string;
}

async function startExecutor(cwd: string): Promise<RunningExecutor> {
  const child: ChildProcess = spawn(process.execPath, [IDEM_BIN, "executor", "--port", "0"], {
    cwd,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.on("data", (d: Buffer) => {
    log += d.toString("utf8");
  });
  child.stderr?.on("data", (d: Buffer) => {
    log += d.toString("utf8");
  });
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no API URL in the log:\n${log}`)), PATIENCE_MS);
    const look = () => {
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
  return { url, log: () => log, [Symbol.asyncDispose]: stop };
}

/** Polls `GET /v1/outputs/:jobId` until the output is recorded (or the bound is reached). */
async function waitForOutput(
  url: string,
  jobId: string,
  token: string,
  log: () => string,
): Promise<unknown> {
  const deadline = Date.now() + PATIENCE_MS;
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/v1/outputs/${jobId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (res.status === 200) return await res.json();
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no output for ${jobId} was recorded; the executor's log:\n${log()}`);
}

beforeAll(() => {
  if (!existsSync(join(REPO_ROOT, "apps/cli/dist/main.js")))
    throw new Error("build the CLI first (npm run build, or npx tsc -b)");
});

describe("examples/command-agent", () => {
  it("is run by idem executor for an enqueued job, and its effect is applied by the interpreter", async () => {
    await using dir = await tempDir("idem-example-command-");
    const token = await createWorkspace(dir.path);
    {
      await using executor = await startExecutor(dir.path);
      const enqueued = await idem(dir.path, "enqueue", "job.json", "--json");
      expect(enqueued.code, enqueued.stderr).toBe(0);
      expect(JSON.parse(enqueued.stdout)).toMatchObject({ jobId: "note-1", stream: "embedded" });
      const record = await waitForOutput(executor.url, "note-1", token, executor.log);
      expect(record).toMatchObject({
        jobId: "note-1",
        agent: "writer",
        source: "executor",
        output: {
          jobId: "note-1",
          agent: "writer",
          effects: [{ kind: "file.write", root: "outbox", path: "notes/note-1.md" }],
          meta: { words: 8 },
        },
      });
    }
    const interpreted = await idem(dir.path, "interpreter", "--once");
    expect(interpreted.code, interpreted.stderr + interpreted.stdout).toBe(0);
    expect(readFileSync(join(dir.path, "outbox/notes/note-1.md"), "utf8")).toBe(
      "# Hello from idem\n\nThis note was written by a command agent.\n",
    );
  });
});

describe("examples/command-agent on a job it cannot do", () => {
  it("exits 1, so the delivery is retried and then dead-lettered with the agent's last stderr line", async () => {
    await using dir = await tempDir("idem-example-failing-");
    const token = await createWorkspace(dir.path, {}, { backoffMs: [100], maxDeliver: 2 });
    writeFileSync(
      join(dir.path, "bad-job.json"),
      JSON.stringify({ jobId: "note-2", agent: "writer", input: { title: "no text" } }),
    );
    await using executor = await startExecutor(dir.path);
    const enqueued = await idem(dir.path, "enqueue", "bad-job.json");
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const deadline = Date.now() + PATIENCE_MS;
    let jobs: { jobId: string; class: string; deliveries: number; lastError: string }[] = [];
    while (Date.now() < deadline && jobs.length === 0) {
      const ls = await idem(dir.path, "dlq", "ls", "--json");
      expect(ls.code, ls.stderr).toBe(0);
      jobs = (JSON.parse(ls.stdout) as { jobs: typeof jobs }).jobs;
      if (jobs.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    expect(jobs, executor.log()).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ jobId: "note-2", class: "transient", deliveries: 2 });
    expect(jobs[0]?.lastError).toContain('input needs a string "title" and a string "text"');
    const missing = await fetch(`${executor.url}/v1/outputs/note-2`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(missing.status).toBe(404);
  });
});

describe("examples/http-agent", () => {
  it("submits to a running executor, gets a duplicate the second time, and reads its output back", async () => {
    await using dir = await tempDir("idem-example-http-");
    await createWorkspace(dir.path, { token: "example-token" });
    await using executor = await startExecutor(dir.path);
    const agent = join(EXAMPLES, "http-agent/submit.mjs");

    const refused = await run(process.execPath, [agent, "report-1"], {
      env: childEnv({ IDEM_URL: executor.url }),
    }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => e,
    );
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout.trim())).toMatchObject({ step: "submit", httpStatus: 401 });

    const { stdout } = await run(process.execPath, [agent, "report-1"], {
      env: childEnv({ IDEM_URL: executor.url, IDEM_TOKEN: "example-token" }),
    });
    const steps = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(steps).toMatchObject([
      { step: "submit", httpStatus: 201, status: "recorded", jobId: "report-1" },
      { step: "submit", httpStatus: 200, status: "duplicate", jobId: "report-1" },
      {
        step: "read",
        httpStatus: 200,
        record: {
          jobId: "report-1",
          agent: "reporter",
          source: "http",
          output: {
            effects: [{ kind: "file.write", root: "outbox", path: "reports/report-1.txt" }],
          },
        },
      },
    ]);
    const status = await idem(dir.path, "status", "--json");
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ outputs: 1, rejections: 0 });
  });
});
