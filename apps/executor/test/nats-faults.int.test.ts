import { enqueueJob } from "@idem/core";
import { connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import { startNatsServer, tempJournal } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { createExecutor } from "../src/index.js";
import { countFile, runCounts, testConfig, waitFor } from "./helpers.js";

describe("executor and a nats-server killed mid-stream", () => {
  it("loses no job, records no output twice and reconnects by itself", async () => {
    await using server = await startNatsServer();
    await using tj = await tempJournal();
    const config = testConfig({
      dir: tj.dir,
      journalPath: tj.path,
      natsUrl: server.url,
      // Deliveries in flight at the kill come back after the ack wait: short enough to wait for,
      // long beside a heartbeat (a third of it) on a busy machine. No backoff: its first step
      // would be the ack wait.
      queue: { ackWaitMs: 5_000, backoffMs: [], maxDeliver: 10, maxAckPending: 4 },
    });
    const nats = config.nats as NonNullable<typeof config.nats>;
    const counts = countFile(tj.dir);
    const nc = await connectNats(server.url, "test-publisher");
    await ensureJobsStream(await jetstreamManager(nc), nats);
    const publisher = createJobPublisher({ js: jetstream(nc), nats });
    const N = 30;
    for (let i = 0; i < N; i++) {
      await enqueueJob(
        { jobId: `k-${i}`, agent: "writer", input: { countFile: counts, sleepMs: 30 } },
        { journal: tj.journal, publisher },
      );
    }
    const ex = createExecutor({ config, journal: tj.journal, logger: silentLogger() });
    await ex.start();
    try {
      await waitFor("a few outputs", async () => (await tj.journal.status()).outputs >= 5);
      await server.kill("SIGKILL");
      await new Promise((r) => setTimeout(r, 500));
      await server.restart();
      await waitFor("every output", async () => (await tj.journal.status()).outputs === N, 120_000);
    } finally {
      await ex.stop();
      await nc.close();
    }
    const outputs = await tj.journal.outputs.list();
    expect(outputs.length).toBe(N);
    expect(new Set(outputs.map((o) => o.jobId)).size).toBe(N);
    const c = await runCounts(counts);
    expect(Object.keys(c).length).toBe(N);
  });
});
