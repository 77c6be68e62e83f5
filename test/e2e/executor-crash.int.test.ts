// Crash drills: a real `idem executor` process SIGKILLs itself at a fault point (IDEM_FAULT), a
// second one takes over from the JetStream redelivery. Uses the built CLI (npm run build first).
import { type ChildProcess, spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { enqueueJob } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
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

const IDEM = fileURLToPath(new URL("../../apps/cli/bin/idem.js", import.meta.url));
let server: NatsServerHandle;
/** A claim (the agent timeout) no wait in this file outlasts: only a takeover ends it. */
const CLAIM_MS = 10 * 60_000;

beforeAll(async () => {
  server = await startNatsServer();
});
afterAll(async () => {
  await server?.stop();
});

function startIdemExecutor(configFile: string, fault?: string): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn" };
  delete env.IDEM_FAULT;
  if (fault) env.IDEM_FAULT = fault;
  return spawn(process.execPath, [IDEM, "executor", "--no-api", "--config", configFile], {
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

async function drill(fault: "executor.after-record" | "executor.after-run") {
  await using dir = await tempDir();
  const journalPath = join(dir.path, "journal.db");
  const config = testConfig({
    dir: dir.path,
    journalPath,
    natsUrl: server.url,
    // The second executor takes the job over once JetStream's ack wait and the dead one's claim
    // (its lease is the agent timeout) have lapsed: short enough to wait for, long beside an agent
    // run and a heartbeat (a third of the ack wait) on a busy machine. No backoff: its first step
    // would be the ack wait.
    queue: { ackWaitMs: 3_000, backoffMs: [], maxDeliver: 6, maxAckPending: 1 },
    timeoutMs: 10_000,
  });
  const file = join(dir.path, "idem.config.json");
  await writeFile(file, configFileJson(config));
  const counts = countFile(dir.path);
  const journal = await openSqliteJournal(journalPath);
  const nc = await connectNats(server.url);
  try {
    const nats = config.nats as NonNullable<typeof config.nats>;
    await ensureJobsStream(await jetstreamManager(nc), nats);
    const publisher = createJobPublisher({ js: jetstream(nc), nats });
    await enqueueJob(
      { jobId: "crash-1", agent: "writer", input: { countFile: counts } },
      { journal, publisher },
    );
    const first = startIdemExecutor(file, fault);
    const end = await exited(first);
    expect(end.signal).toBe("SIGKILL");
    expect(await runCounts(counts)).toEqual({ "crash-1": 1 });
    expect(await journal.outputs.has("crash-1")).toBe(fault === "executor.after-record");

    const second = startIdemExecutor(file);
    try {
      await waitFor("the output", () => journal.outputs.has("crash-1"));
      if (fault === "executor.after-record") {
        await waitFor("the skipped redelivery", async () => {
          const c = await journal.events.count(["redelivery.skipped"]);
          return (c["redelivery.skipped"] ?? 0) >= 1;
        });
      }
      const jsm = await jetstreamManager(nc);
      await waitFor("the ack", async () => {
        const info = await jsm.consumers.info(nats.stream, "idem-executor-writer");
        return info.num_ack_pending === 0 && info.num_pending === 0;
      });
    } finally {
      second.kill("SIGTERM");
      await exited(second);
    }
    expect((await journal.outputs.list()).length).toBe(1);
    return await runCounts(counts);
  } finally {
    await nc.close();
    await journal.close();
  }
}

describe("idem executor crash drills on JetStream", () => {
  it("killed at executor.after-record: the redelivery is acked without running the agent again", async () => {
    expect(await drill("executor.after-record")).toEqual({ "crash-1": 1 });
  });

  it("killed at executor.after-run: the agent runs again and exactly one output is recorded", async () => {
    expect(await drill("executor.after-run")).toEqual({ "crash-1": 2 });
  });
});

describe("a JetStream job whose executor is killed while its agent runs", () => {
  it("is taken over on its very next delivery, at once, as the dead executor's claim is provably dead", async () => {
    // Before issue 36, the next delivery found the dead executor's claim held, nak'd and came
    // back: deliveries 2 and 3 were spent waiting, the job ran on its last one. Then the next
    // delivery waited in place for the dead claim to end (the agent's timeout). Now its holder is
    // found dead on this host and the claim is taken over at once.
    await using dir = await tempDir();
    const journalPath = join(dir.path, "journal.db");
    const config = testConfig({
      dir: dir.path,
      journalPath,
      natsUrl: server.url,
      // The dead executor's claim lasts the agent timeout (10 min), far past the wait for the
      // output (WAIT_MS): only the dead-holder takeover records the job in time. The ack wait
      // (10 s) is when JetStream delivers the job again; a heartbeat every third of it keeps a
      // live delivery on a busy machine, so no delivery is spent on a slow one.
      queue: { ackWaitMs: 10_000, backoffMs: [], maxDeliver: 3, maxAckPending: 1 },
      timeoutMs: CLAIM_MS,
    });
    const file = join(dir.path, "idem.config.json");
    await writeFile(file, configFileJson(config));
    const counts = countFile(dir.path);
    const pidFile = join(dir.path, "agent.pids");
    const journal = await openSqliteJournal(journalPath);
    const nc = await connectNats(server.url);
    const nats = config.nats as NonNullable<typeof config.nats>;
    let second: ChildProcess | undefined;
    try {
      await ensureJobsStream(await jetstreamManager(nc), nats);
      const publisher = createJobPublisher({ js: jetstream(nc), nats });
      await enqueueJob(
        {
          jobId: "budget-1",
          agent: "writer",
          input: { countFile: counts, sleepFirstMs: 120_000, pidFile },
        },
        { journal, publisher },
      );
      const first = startIdemExecutor(file);
      await waitFor("the first agent running", async () => {
        const text = await readFile(pidFile, "utf8").catch(() => "");
        return text.trim().length > 0;
      });
      first.kill("SIGKILL");
      await exited(first);
      const held = await journal.jobs.get("budget-1");
      expect(held).toMatchObject({ state: "running", deliveries: 1 });
      expect(held?.leaseUntil).toBeGreaterThan(Date.now() + CLAIM_MS / 2);
      // Its agent, left behind by the SIGKILL, is ended here (a test leaves no process).
      const orphan = Number((await readFile(pidFile, "utf8")).trim().split("\n")[0]);
      try {
        process.kill(orphan, "SIGKILL");
      } catch {
        // gone already
      }
      second = startIdemExecutor(file);
      await waitFor("the output", () => journal.outputs.has("budget-1"));
      const jsm = await jetstreamManager(nc);
      await waitFor("the ack", async () => {
        const info = await jsm.consumers.info(nats.stream, "idem-executor-writer");
        return info.num_ack_pending === 0 && info.num_pending === 0;
      });
      const info = await jsm.consumers.info(nats.stream, "idem-executor-writer");
      // Two deliveries in all: the one that died with its executor, and the one that took it over.
      expect(info.delivered.consumer_seq).toBe(2);
      expect(await runCounts(counts)).toEqual({ "budget-1": 2 });
      expect(await journal.deadLetters.list()).toEqual([]);
      expect((await journal.jobs.get("budget-1"))?.deliveries).toBe(2);
    } finally {
      second?.kill("SIGTERM");
      if (second) await exited(second);
      await nc.close();
      await journal.close();
    }
  });
});

describe("idem executor refuses an unsafe config", () => {
  it("exits 3 before any connection, naming the key like doctor", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "idem.config.json");
    await writeFile(
      file,
      JSON.stringify({
        journal: { retentionDays: 0.001 },
        agents: { writer: { command: ["true"] } },
        nats: { url: "nats://127.0.0.1:1", duplicateWindowMs: 10_000, publishRetryMs: 60_000 },
      }),
    );
    const child = spawn(process.execPath, [IDEM, "executor", "--config", file], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    const end = await exited(child);
    expect(end.code).toBe(3);
    expect(stderr).toMatch(/journal\.retentionDays/);
    expect(stderr).toMatch(/nats\.duplicateWindowMs/);
  });
});
