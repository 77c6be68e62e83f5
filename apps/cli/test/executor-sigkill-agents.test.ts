// No orphaned agents (issue 50): a SIGKILLed executor runs no code, yet its agent, and what the
// agent started, do not run on while their job is delivered again elsewhere (double LLM spend).
// Its watchdog kills their process group when the executor's end closes its pipe.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type OpsFixture, opsFixture } from "./ops-fixture.js";
import { cleanEnv, IDEM_BIN } from "./ops-helpers.js";

let fx: OpsFixture | undefined;
const pids: number[] = [];
afterEach(async () => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone, as it should be
    }
  }
  await fx?.close();
  fx = undefined;
});

/** An agent that starts a child of its own (in its process group), notes both PIDs, and waits. */
const AGENT = `
const { spawn } = require("node:child_process");
const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 600000)"], { stdio: "ignore" });
require("node:fs").writeFileSync(process.argv[2], process.pid + " " + child.pid);
setTimeout(() => {}, 600000);
`;

/** Whether a process runs: it exists and is no zombie (a zombie waits only to be reaped). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean, ms: number) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a SIGKILLed executor", () => {
  it("leaves no agent process running 10 s later: the agent and the child it started are killed", async () => {
    fx = await opsFixture({
      agents: { slow: { command: ["node", "./slow.cjs", "agent.pids"], timeoutMs: 600_000 } },
      queue: { ackWaitMs: 600_000 },
    });
    writeFileSync(join(fx.ws.dir, "slow.cjs"), AGENT);
    const executor = spawn(
      process.execPath,
      [IDEM_BIN, "executor", "--no-api", "--config", fx.ws.config],
      { env: cleanEnv({ IDEM_LOG_LEVEL: "warn" }), stdio: "ignore" },
    );
    pids.push(executor.pid as number);
    const exited = new Promise((r) => executor.once("exit", r));
    await fx.journal.jobs.enqueue({ jobId: "slow-1", agent: "slow", input: {} });
    const pidFile = join(fx.ws.dir, "agent.pids");
    let agent: number[] = [];
    await until(
      "the agent and its child running",
      () => {
        try {
          agent = readFileSync(pidFile, "utf8").split(" ").map(Number);
          return agent.length === 2 && agent.every(running);
        } catch {
          return false;
        }
      },
      60_000,
    );
    pids.push(...agent);

    executor.kill("SIGKILL");
    await exited;
    await until("every agent process gone", () => !agent.some(running), 10_000);
    expect(agent.filter(running)).toEqual([]);
  });
});
