// A SIGKILLed executor's job on JetStream: another executor on the same host finds the dead
// holder (its owner ID carries host, PID and boot), ends its journal lease and naks the dead
// consumer's delivery, so JetStream delivers the job again at once and it runs there. The ack wait
// and the claim (an hour each) far outlast the wait for the output, so nothing but the takeover
// can explain the second run (issue 42, item 8).
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { enqueueJob } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { agentConsumerName, connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { type NatsServerHandle, startNatsServer, tempDir } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  configFileJson,
  countFile,
  runCounts,
  testConfig,
  waitFor,
} from "../../apps/executor/test/helpers.js";
import { buildForTest, IDEM_BIN } from "./interpreter-fixture.js";

/** The claim (the agent's timeout) and JetStream's ack wait: neither can pass during the test. */
const CLAIM_MS = 60 * 60_000;
const ACK_WAIT_MS = 60 * 60_000;

let server: NatsServerHandle;
beforeAll(async () => {
  buildForTest("apps/cli");
  server = await startNatsServer();
});
afterAll(async () => {
  await server?.stop();
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

describe("a dead executor's delivery on JetStream", () => {
  it("is delivered again at once and run by another executor on the same host, long before its ack wait", async () => {
    await using dir = await tempDir();
    const journalPath = join(dir.path, "journal.db");
    const config = testConfig({
      dir: dir.path,
      journalPath,
      natsUrl: server.url,
      queue: { ackWaitMs: ACK_WAIT_MS, backoffMs: [], maxDeliver: 2, maxAckPending: 1 },
      timeoutMs: CLAIM_MS,
    });
    const file = join(dir.path, "idem.config.json");
    await writeFile(file, configFileJson(config));
    const counts = countFile(dir.path);
    const nats = config.nats as NonNullable<typeof config.nats>;
    const journal = await openSqliteJournal(journalPath);
    const nc = await connectNats(server.url);
    try {
      await ensureJobsStream(await jetstreamManager(nc), nats);
      const publisher = createJobPublisher({ js: jetstream(nc), nats });
      await enqueueJob(
        { jobId: "held-1", agent: "writer", input: { countFile: counts } },
        { journal, publisher },
      );
      // The agent has run; the executor dies before it records, holding the job's claim.
      const first = startExecutor(file, "executor.after-run");
      expect((await exited(first)).signal).toBe("SIGKILL");
      const held = await journal.jobs.get("held-1");
      expect(held).toMatchObject({ state: "running", deliveries: 1 });
      expect(held?.leaseUntil).toBeGreaterThan(Date.now() + CLAIM_MS / 2);

      const second = startExecutor(file);
      const jsm = await jetstreamManager(nc);
      try {
        // A minute at most, beside an hour of ack wait and of claim: only the takeover can pass.
        await waitFor("the output", () => journal.outputs.has("held-1"));
        await waitFor("the ack", async () => {
          const info = await jsm.consumers.info(nats.stream, agentConsumerName("writer"));
          return info.num_ack_pending === 0 && info.num_pending === 0;
        });
      } finally {
        second.kill("SIGTERM");
        await exited(second);
      }
      // maxDeliver is 2: the takeover spent no delivery beyond the one that died.
      const info = await jsm.consumers.info(nats.stream, agentConsumerName("writer"));
      expect(info.delivered.consumer_seq).toBe(2);
      expect(await runCounts(counts)).toEqual({ "held-1": 2 });
      expect(await journal.jobs.get("held-1")).toMatchObject({ state: "done", deliveries: 2 });
      expect((await journal.outputs.list()).length).toBe(1);
      expect(await journal.deadLetters.list()).toEqual([]);
    } finally {
      await nc.close();
      await journal.close();
    }
  });
});
