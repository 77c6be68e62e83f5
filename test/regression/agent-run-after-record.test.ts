// The chaos drill (seed 5) once found an agent run after its job's output was recorded: the
// in-progress claim lasted one agent timeout from the claim, but under load the agent started late,
// so the claim lapsed while the first delivery was still working and a redelivery took it. The
// claim is now extended with every heartbeat, and a job in progress in a process is never started
// again by that process.
import { enqueueJob } from "@idem/core";
import { createExecutor } from "@idem/executor";
import { openSqliteJournal } from "@idem/journal";
import { connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import { ManualClock, parseConfig } from "@idem/schema";
import { startNatsServer, tempDir } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const TIMEOUT_MS = 10_000;

/** Polls `check` until it holds; the bound is far beyond a passing run on a busy machine. */
async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe("regression: an agent run after its output was recorded", () => {
  it("keeps the in-progress claim alive past the agent timeout while the delivery works", async () => {
    await using nats = await startNatsServer();
    await using dir = await tempDir("idem-regress-claim-");
    const r = parseConfig(
      {
        journal: { path: "journal.db" },
        // The timeout is the claim's lease too, and how long the second message is held off.
        agents: { writer: { command: ["unused"], timeoutMs: TIMEOUT_MS } },
        // No backoff: its first step would be JetStream's ack wait, and a short one a busy machine
        // can outlast between two heartbeats (a third of it).
        queue: { ackWaitMs: 3_000, maxDeliver: 5, backoffMs: [], maxAckPending: 2 },
        nats: {
          url: nats.url,
          duplicateWindowMs: 60_000,
          maxAgeMs: 3_600_000,
          publishRetryMs: 5000,
        },
      },
      { dir: dir.path },
    );
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    const config = r.config;
    const natsConfig = config.nats as NonNullable<typeof config.nats>;
    // One clock for the journal and both executors: the test moves it past the claim's lease.
    const clock = new ManualClock(Date.now());
    const journal = await openSqliteJournal(config.journal.path, { clock });
    const nc = await connectNats(nats.url, "regression");
    await ensureJobsStream(await jetstreamManager(nc), natsConfig);
    const publisher = createJobPublisher({ js: jetstream(nc), nats: natsConfig });
    let runs = 0;
    const job = { jobId: "slow-start", agent: "writer", input: {} };
    const run = async () => {
      runs += 1;
      // The agent "started late": the claim's original lease (one timeout) is over...
      clock.advance(2 * TIMEOUT_MS);
      // ...the delivery's heartbeat extends it...
      await until("the claim extended past the lapse", async () => {
        const row = await journal.jobs.get(job.jobId);
        return (row?.leaseUntil ?? 0) > clock.now();
      });
      // ...and while this delivery still works, the same job arrives again under another msg id.
      await publisher.publish(job, { msgId: "slow-start#again" });
      await sleep(1500);
      return { jobId: job.jobId, agent: job.agent, summary: "once", effects: [] };
    };
    const executors = [0, 1].map(() =>
      createExecutor({ config, journal, clock, logger: silentLogger(), run }),
    );
    for (const e of executors) await e.start();
    try {
      await enqueueJob(job, { journal, publisher });
      await until("the output", () => journal.outputs.has(job.jobId));
      // The second message is delivered, finds the output recorded and is acked without a run.
      const skipped = async () =>
        (await journal.events.count(["redelivery.skipped"]))["redelivery.skipped"] ?? 0;
      await until("the skipped redelivery", async () => (await skipped()) > 0);
      expect(await journal.outputs.has(job.jobId)).toBe(true);
      expect(runs).toBe(1);
      expect((await journal.status()).rejections).toBe(0);
      expect(
        (await journal.events.count(["redelivery.skipped"]))["redelivery.skipped"],
      ).toBeGreaterThanOrEqual(1);
    } finally {
      for (const e of executors) await e.stop();
      await nc.close();
      await journal.close();
    }
  });
});
