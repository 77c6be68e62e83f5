import { execFileSync, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type OpsFixture, opsFixture } from "./ops-fixture.js";
import { cleanEnv, gitIn, IDEM_BIN } from "./ops-helpers.js";

let fx: OpsFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const AGENT = `
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const job = JSON.parse(input);
  process.stdout.write(JSON.stringify({
    effects: [{ kind: "git.commit", repo: "site", message: "from " + job.jobId,
                files: [{ path: "out/" + job.jobId + ".txt", content: String(job.input.n) + "\\n" }] }],
  }));
});
`;

/** Polls `check` until it holds; the bound is far beyond a passing run on a busy machine. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("idem up", () => {
  it("runs executor and interpreter with prefixed logs, restarts one that dies, and stops both on SIGTERM", async () => {
    fx = await opsFixture({
      agents: { writer: { command: ["node", "./agent.mjs"], timeoutMs: 20_000 } },
      queue: { ackWaitMs: 5_000, backoffMs: [200], maxDeliver: 3 },
      api: { port: 0 },
    });
    writeFileSync(join(fx.ws.dir, "agent.mjs"), AGENT);
    const child = spawn(process.execPath, [IDEM_BIN, "up", "--config", fx.ws.config], {
      env: cleanEnv({ IDEM_LOG_LEVEL: "info" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    try {
      await until(
        "both started",
        () => /interpreter started \(pid \d+\)/.test(out) && /executor started/.test(out),
      );
      await fx.journal.jobs.enqueue({ jobId: "job-1", agent: "writer", input: { n: 1 } });
      await until(
        "job-1 applied",
        async () => (await fx?.journal.runs.latest("job-1"))?.state === "done",
      );
      expect(out).toMatch(/^executor +\| /m);
      expect(out).toMatch(/^interpreter \| /m);

      const pid = Number(/interpreter started \(pid (\d+)\)/.exec(out)?.[1]);
      process.kill(pid, "SIGKILL");
      await until(
        "interpreter restarted",
        () => (out.match(/up interpreter started/g) ?? []).length >= 2,
      );
      expect(out, out).toContain("interpreter exited (SIGKILL); restarting");
      await fx.journal.jobs.enqueue({ jobId: "job-2", agent: "writer", input: { n: 2 } });
      await until(
        "job-2 applied",
        async () => (await fx?.journal.runs.latest("job-2"))?.state === "done",
      );
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(out).toContain("executor stopped");
    expect(out).toContain("interpreter stopped");
    expect(gitIn(fx.repoDir, "log", "--format=%s", "main")).toContain("from job-2");
  });
});

describe("idem up --log-format pretty", () => {
  it("logs one line per entry, an agent's stderr line as its message, about five lines a job", async () => {
    fx = await opsFixture({
      agents: { writer: { command: ["node", "./agent.mjs"], timeoutMs: 60_000 } },
      api: { port: 0 },
    });
    writeFileSync(
      join(fx.ws.dir, "agent.mjs"),
      `console.error("working on " + process.env.IDEM_JOB_ID);\n${AGENT}`,
    );
    const jobs = 20;
    for (let n = 1; n <= jobs; n++)
      await fx.journal.jobs.enqueue({ jobId: `pretty-${n}`, agent: "writer", input: { n } });
    const child = spawn(
      process.execPath,
      [IDEM_BIN, "up", "--log-format", "pretty", "--config", fx.ws.config],
      { env: cleanEnv({ IDEM_LOG_LEVEL: "info" }), stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    try {
      await until("every job applied", async () => {
        const s = await fx?.journal.status();
        return s?.runs.done === jobs;
      });
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    const lines = out.trimEnd().split("\n");
    expect(out).toMatch(
      /^executor +\| \[[\d:.]+\] INFO \(idem-executor\): pretty-7: writer stderr: working on pretty-7 \{"delivery":1\}$/m,
    );
    // No entry without a message, no field on a line of its own.
    expect(
      lines.filter((l) => /\):\s*$/.test(l)),
      out,
    ).toEqual([]);
    expect(
      lines.filter((l) => /^\w+ +\| {4}/.test(l)),
      out,
    ).toEqual([]);
    // Per job: the stderr line, recorded, claimed, settled, ended; and a few lines to start and stop.
    expect(lines.length, out).toBeLessThanOrEqual(jobs * 5 + 20);
  });
});

describe("idem up on Ctrl-C", () => {
  it("says each child stopped once in the child and once in up", async () => {
    fx = await opsFixture({
      agents: { writer: { command: ["node", "./agent.mjs"], timeoutMs: 20_000 } },
      api: { port: 0 },
    });
    writeFileSync(join(fx.ws.dir, "agent.mjs"), AGENT);
    // Its own process group, as a shell gives a foreground job: Ctrl-C signals the whole group.
    const child = spawn(process.execPath, [IDEM_BIN, "up", "--config", fx.ws.config], {
      env: cleanEnv({ IDEM_LOG_LEVEL: "info" }),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    try {
      await until(
        "both children logging",
        () =>
          /^interpreter \| .*"msg":"interpreter started"/m.test(out) &&
          /^executor +\| .*"msg":"executor started"/m.test(out),
      );
      process.kill(-(child.pid as number), "SIGINT");
      expect(await exited, out).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    const count = (re: RegExp) => (out.match(re) ?? []).length;
    expect(count(/^interpreter \| .*"msg":"interpreter stopped"/gm), out).toBe(1);
    expect(count(/^executor +\| .*"msg":"executor stopped"/gm), out).toBe(1);
    expect(count(/^up interpreter stopped$/gm), out).toBe(1);
    expect(count(/^up executor stopped$/gm), out).toBe(1);
  });
});

describe("idem up --console", () => {
  it("serves the console beside the executor and interpreter, and stops all three", async () => {
    fx = await opsFixture({
      agents: { writer: { command: ["node", "./agent.mjs"], timeoutMs: 20_000 } },
      api: { port: 0 },
      console: { port: 0 },
    });
    writeFileSync(join(fx.ws.dir, "agent.mjs"), AGENT);
    const child = spawn(process.execPath, [IDEM_BIN, "up", "--console", "--config", fx.ws.config], {
      env: cleanEnv({ IDEM_LOG_LEVEL: "info" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    try {
      await until("the console's URL", () => /^console +\| idem console: http:\/\/\S+/m.test(out));
      const url = /^console +\| idem console: (http:\/\/\S+)/m.exec(out)?.[1];
      await fx.journal.jobs.enqueue({ jobId: "job-1", agent: "writer", input: { n: 1 } });
      await until(
        "job-1 applied",
        async () => (await fx?.journal.runs.latest("job-1"))?.state === "done",
      );
      const overview = (await (await fetch(`${url}/?format=json`)).json()) as {
        status: { outputs: number; runs: { done: number } };
      };
      expect(overview.status.outputs).toBe(1);
      expect(overview.status.runs.done).toBe(1);
      const page = await fetch(`${url}/outputs/job-1`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("job-1/0");
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited, out).toBe(0);
    for (const name of ["executor", "interpreter", "console"])
      expect(out, out).toMatch(new RegExp(`^up ${name} stopped$`, "m"));
  });
});

/**
 * An agent that is a shell script starting a child of its own (so only a kill of its process group
 * ends both), which sleeps `ms` and writes `started` first; then it prints an empty output.
 */
function slowAgent(dir: string, ms: number): string[] {
  writeFileSync(
    join(dir, "sleeper.cjs"),
    `require("node:fs").writeFileSync(${JSON.stringify(join(dir, "started"))}, String(process.pid));
setTimeout(() => {}, Number(process.argv[2]));`,
  );
  writeFileSync(
    join(dir, "agent.sh"),
    `cat > /dev/null\nnode "${join(dir, "sleeper.cjs")}" ${ms} &\nwait\necho '{"effects":[]}'\n`,
  );
  return ["sh", join(dir, "agent.sh")];
}

/** The processes whose command line names `dir` (the agent's script and its child do). */
function processesIn(dir: string): string[] {
  const ps = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  return ps.split("\n").filter((l) => l.includes(dir) && !l.includes("ps -eo"));
}

/** Starts `idem up` in a process of its own, collecting its output. */
function startUp(config: string, extra: string[] = []) {
  const child = spawn(process.execPath, [IDEM_BIN, "up", "--config", config, ...extra], {
    env: cleanEnv({ IDEM_LOG_LEVEL: "info" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const state = { out: "" };
  child.stdout.on("data", (d: Buffer) => {
    state.out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    state.out += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  return { child, state, exited };
}

describe("idem up stopped while an agent runs", () => {
  it("on SIGINT waits for a 20 s agent (the default grace), records its output, and leaves no process behind", async () => {
    fx = await opsFixture({ api: { port: 0 } });
    const command = slowAgent(fx.ws.dir, 20_000);
    fx.ws.writeConfig({
      repos: { site: { path: "repos/site" } },
      roots: { outbox: { path: "outbox" } },
      api: { port: 0 },
      agents: { slow: { command, timeoutMs: 120_000 } },
    });
    const up = startUp(fx.ws.config);
    try {
      await until("both started", () => /executor started/.test(up.state.out));
      await fx.journal.jobs.enqueue({ jobId: "slow-1", agent: "slow", input: {} });
      await until("the agent running", () => existsSync(join(fx?.ws.dir ?? "", "started")));
      up.child.kill("SIGINT");
      expect(await up.exited, up.state.out).toBe(0);
    } finally {
      up.child.kill("SIGKILL");
    }
    const out = up.state.out;
    expect(out).toContain("waits up to 60 s for its agents in flight");
    expect(out).toMatch(/waiting up to 60 s .*for the agents of 1 job/);
    expect(out).toContain("every job in flight finished before the executor stopped");
    expect(await fx.journal.outputs.has("slow-1")).toBe(true);
    expect(processesIn(fx.ws.dir)).toEqual([]);
  });

  it("with --grace 1 kills the agent's process group, gives the job back uncounted, and says so", async () => {
    fx = await opsFixture({ api: { port: 0 } });
    const command = slowAgent(fx.ws.dir, 600_000);
    fx.ws.writeConfig({
      repos: { site: { path: "repos/site" } },
      roots: { outbox: { path: "outbox" } },
      api: { port: 0 },
      agents: { slow: { command, timeoutMs: 900_000 } },
      queue: { ackWaitMs: 600_000 },
    });
    const up = startUp(fx.ws.config, ["--grace", "1"]);
    try {
      await until("both started", () => /executor started/.test(up.state.out));
      await fx.journal.jobs.enqueue({ jobId: "slow-2", agent: "slow", input: {} });
      await until("the agent running", () => existsSync(join(fx?.ws.dir ?? "", "started")));
      up.child.kill("SIGINT");
      expect(await up.exited, up.state.out).toBe(0);
    } finally {
      up.child.kill("SIGKILL");
    }
    const out = up.state.out;
    expect(out).toMatch(/abandoning 1 job\(s\) whose agents still run/);
    expect(out).toContain("the job is queued again, due now, this delivery not counted");
    expect(out).toMatch(/"abandoned":\["slow-2"\]/);
    expect(processesIn(fx.ws.dir)).toEqual([]);
    const job = await fx.journal.jobs.get("slow-2");
    expect([job?.state, job?.deliveries, job?.leaseOwner]).toEqual(["queued", 0, null]);
    expect((await fx.journal.events.list({ jobId: "slow-2", type: "job.released" })).length).toBe(
      1,
    );
  });
});
