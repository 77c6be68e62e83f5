// A SIGKILLed executor's job delivery on the embedded queue is delivered again at once by another
// executor on the same host (its owner is provably dead), not after the job lease (`ackWaitMs`,
// 10 minutes here, so nothing but the dead-holder path can explain it).
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { enqueueJob } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import {
  configFileJson,
  countFile,
  runCounts,
  testConfig,
  waitFor,
} from "../../apps/executor/test/helpers.js";
import { buildForTest, IDEM_BIN } from "./interpreter-fixture.js";

const LEASE_MS = 10 * 60_000;

beforeAll(() => {
  buildForTest("apps/cli");
});

function startExecutor(configFile: string, fault?: string): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn" };
  delete env.IDEM_FAULT;
  if (fault) env.IDEM_FAULT = fault;
  return spawn(process.execPath, [IDEM_BIN, "executor", "--no-api", "--config", configFile], {
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
}

const exited = (c: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null)
      resolve({ code: c.exitCode, signal: c.signalCode });
    else c.once("exit", (code, signal) => resolve({ code, signal }));
  });

describe("a dead executor's delivery on the embedded queue", () => {
  it("is delivered again within the old lease by another executor on the same host", async () => {
    await using dir = await tempDir();
    const journalPath = join(dir.path, "journal.db");
    const config = testConfig({
      dir: dir.path,
      journalPath,
      queue: { ackWaitMs: LEASE_MS, maxDeliver: 3, maxAckPending: 1, pollMs: 50 },
      timeoutMs: LEASE_MS,
    });
    const file = join(dir.path, "idem.config.json");
    await writeFile(file, configFileJson(config));
    const counts = countFile(dir.path);
    const journal = await openSqliteJournal(journalPath);
    try {
      await enqueueJob(
        { jobId: "held-1", agent: "writer", input: { countFile: counts } },
        { journal },
      );
      const first = startExecutor(file, "executor.after-run");
      expect((await exited(first)).signal).toBe("SIGKILL");
      const held = await journal.jobs.get("held-1");
      expect(held).toMatchObject({ state: "running", deliveries: 1 });
      expect(held?.leaseUntil).toBeGreaterThan(Date.now() + LEASE_MS / 2);

      const second = startExecutor(file);
      try {
        // Half the lease: only the dead-holder path can pass; generous for a slow machine.
        await waitFor("the output", () => journal.outputs.has("held-1"), LEASE_MS / 2);
      } finally {
        second.kill("SIGTERM");
        await exited(second);
      }
      expect(await runCounts(counts)).toEqual({ "held-1": 2 });
      expect(await journal.jobs.get("held-1")).toMatchObject({ state: "done", deliveries: 2 });
      expect((await journal.outputs.list()).length).toBe(1);
    } finally {
      await journal.close();
    }
  });
});
