import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { silentLogger } from "@idem/runtime";
import { isIdemError, type Job } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { runWithTimeout } from "../src/agent-runner.js";
import { createCommandRunner } from "../src/index.js";
import { testConfig, waitFor } from "./helpers.js";

const job: Job = { jobId: "j-1", agent: "writer", input: {} };
const log = silentLogger();

describe("runWithTimeout", () => {
  it("fails a function that never settles with TIMEOUT at its timeout and aborts the signal it read", async () => {
    let signal: AbortSignal | undefined;
    const started = Date.now();
    const err = await runWithTimeout(
      (_job, context) => {
        signal = context.signal;
        return new Promise(() => {});
      },
      job,
      150,
      log,
    ).catch((e: unknown) => e);
    expect(isIdemError(err, "TIMEOUT")).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(signal?.aborted).toBe(true);
  });

  it("passes a runner's answer and its rejection through, and a runner that throws at once", async () => {
    expect(await runWithTimeout(async () => ({ summary: "ok" }), job, 1_000, log)).toEqual({
      summary: "ok",
    });
    const failing = await runWithTimeout(
      async () => {
        throw new Error("agent broke");
      },
      job,
      1_000,
      log,
    ).catch((e: unknown) => e);
    expect((failing as Error).message).toBe("agent broke");
    const throwing = await runWithTimeout(
      () => {
        throw new Error("sync throw");
      },
      job,
      1_000,
      log,
    ).catch((e: unknown) => e);
    expect((throwing as Error).message).toBe("sync throw");
  });
});

describe("createCommandRunner", () => {
  it("kills an agent that runs past timeoutMs and fails the run with TIMEOUT", async () => {
    await using dir = await tempDir("idem-runner-");
    const agent = join(dir.path, "sleeper.sh");
    const pidFile = join(dir.path, "pid");
    // A shell writes its PID at once and becomes the sleep (same PID): it is known long before the
    // timeout, however slowly a busy machine starts processes (Node itself can take seconds).
    await writeFile(agent, `echo $$ > ${JSON.stringify(pidFile)}\nexec sleep 600\n`);
    const config = testConfig({
      dir: dir.path,
      journalPath: join(dir.path, "j.db"),
      extra: { agents: { writer: { command: ["/bin/sh", agent], timeoutMs: 1_500 } } },
    });
    const runner = createCommandRunner(config);
    const err = await runWithTimeout(runner, job, 1_500, log).catch((e: unknown) => e);
    expect(isIdemError(err, "TIMEOUT")).toBe(true);
    const pid = Number(
      await waitFor("the agent's pid", () => readFile(pidFile, "utf8").catch(() => "")),
    );
    await waitFor("the agent to be killed", () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch (e) {
        return (e as NodeJS.ErrnoException).code === "ESRCH";
      }
    });
  });

  it("answers an agent's output when it exits, killing what it left running that holds its stdout", async () => {
    await using dir = await tempDir("idem-runner-bg-");
    const agent = join(dir.path, "leaves-one-behind.sh");
    const pidFile = join(dir.path, "pid");
    // A background sleep inherits the agent's stdout: the pipe stays open after the agent exits.
    await writeFile(
      agent,
      `sleep 600 &\necho $! > ${JSON.stringify(pidFile)}\necho '{"summary":"done"}'\n`,
    );
    const config = testConfig({
      dir: dir.path,
      journalPath: join(dir.path, "j.db"),
      extra: { agents: { writer: { command: ["/bin/sh", agent], timeoutMs: 600_000 } } },
    });
    const runner = createCommandRunner(config);
    // Answered, not left waiting for the sleep's pipe until the timeout.
    expect(await runWithTimeout(runner, job, 600_000, log)).toEqual({ summary: "done" });
    const pid = Number(await readFile(pidFile, "utf8"));
    await waitFor("the agent's leftover to be killed", () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch (e) {
        return (e as NodeJS.ErrnoException).code === "ESRCH";
      }
    });
  });
});
