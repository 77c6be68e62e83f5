// Nothing waits without saying so (issue 36): after an executor is SIGKILLed while it holds a job
// on the embedded queue, `idem jobs`, `idem status` and `idem show` say which job waits, who holds
// it and until when.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type OpsFixture, opsFixture } from "./ops-fixture.js";
import { cleanEnv, IDEM_BIN, idem } from "./ops-helpers.js";

let fx: OpsFixture | undefined;
const pids: number[] = [];
afterEach(async () => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  await fx?.close();
  fx = undefined;
});

/** An agent that notes its PID and then runs far longer than the test. */
const SLOW_AGENT = `
require("node:fs").writeFileSync(process.argv[2], String(process.pid));
setTimeout(() => {}, 120000);
`;

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Listed {
  jobs: {
    jobId: string;
    state: string;
    holder: string | null;
    leaseUntil: number | null;
    deliveries: number;
    maxDeliver: number;
    next: string;
  }[];
  counts: Record<string, number>;
  transport: string;
}

describe("idem jobs", () => {
  it("names the job a SIGKILLed executor held, its holder and its lease end; status and show say so too", async () => {
    const agentPid = "agent.pid";
    fx = await opsFixture({
      agents: { slow: { command: ["node", "./slow.cjs", agentPid], timeoutMs: 600_000 } },
      queue: { ackWaitMs: 600_000, maxDeliver: 3, maxAckPending: 1 },
    });
    writeFileSync(join(fx.ws.dir, "slow.cjs"), SLOW_AGENT);
    const executor = spawn(
      process.execPath,
      [IDEM_BIN, "executor", "--no-api", "--config", fx.ws.config],
      { env: cleanEnv({ IDEM_LOG_LEVEL: "warn" }), stdio: "ignore" },
    );
    pids.push(executor.pid as number);
    const exited = new Promise((r) => executor.once("exit", r));
    await fx.journal.jobs.enqueue({ jobId: "held-1", agent: "slow", input: { n: 1 } });
    await fx.journal.jobs.enqueue({ jobId: "queued-2", agent: "slow", input: { n: 2 } });
    const pidFile = join(fx.ws.dir, agentPid);
    await until("the agent running", () => {
      try {
        return readFileSync(pidFile, "utf8").length > 0;
      } catch {
        return false;
      }
    });
    pids.push(Number(readFileSync(pidFile, "utf8")));
    const killedAt = Date.now();
    executor.kill("SIGKILL");
    await exited;

    const listed = await idem(["jobs", "--json", "--config", fx.ws.config]);
    expect(listed.code, listed.stderr).toBe(0);
    const l = JSON.parse(listed.stdout) as Listed;
    expect(l.transport).toBe("embedded");
    const held = l.jobs.find((j) => j.jobId === "held-1");
    expect(held).toMatchObject({ state: "leased", deliveries: 1, maxDeliver: 3 });
    expect(held?.holder).toContain(`:${executor.pid}:`);
    expect(held?.leaseUntil).toBeGreaterThan(killedAt + 500_000);
    expect(l.jobs.find((j) => j.jobId === "queued-2")?.state).toBe("queued");
    expect(l.counts).toMatchObject({ leased: 1, queued: 1 });

    const text = await idem(["jobs", "--config", fx.ws.config]);
    expect(text.stdout).toMatch(/held-1 +│ slow +│ leased/);
    // Tables and lines show the holder as host:pid:random; --wide and --json in full.
    expect(text.stdout).toContain(`held by ${held?.holder?.split("@")[0]} until`);
    const wide = await idem(["jobs", "--wide", "--config", fx.ws.config]);
    expect(wide.stdout).toContain(`held by ${held?.holder} until`);

    const status = await idem(["status", "--json", "--config", fx.ws.config]);
    const s = JSON.parse(status.stdout) as { leased: { jobId: string; holder: string }[] };
    expect(s.leased).toEqual([
      expect.objectContaining({ jobId: "held-1", holder: held?.holder, ended: false }),
    ]);
    const statusText = await idem(["status", "--config", fx.ws.config]);
    expect(statusText.stdout).toContain("held-1");

    const shown = await idem(["show", "held-1", "--json", "--config", fx.ws.config]);
    expect(shown.code, shown.stderr).toBe(0);
    const view = JSON.parse(shown.stdout) as {
      output: null;
      job: { state: string; holder: string; leaseUntil: number };
      input: { summary: string };
    };
    expect(view.output).toBeNull();
    expect(view.job).toMatchObject({ state: "leased", holder: held?.holder });
    expect(view.input.summary).toBe('{"n":1}');
    const shownText = await idem(["show", "held-1", "--config", fx.ws.config]);
    expect(shownText.stdout).toContain("no output recorded yet");
    expect(shownText.stdout).toContain("leased");
  });
});
