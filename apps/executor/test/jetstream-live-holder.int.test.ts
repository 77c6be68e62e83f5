// A JetStream delivery whose job's claim is held by a live process (this test's own, so never found
// dead) waits in place until that claim ends, then runs the job on the same delivery: the
// dead-holder takeover leaves a live holder alone, and waiting spends no delivery.
import { join } from "node:path";
import { enqueueJob } from "@idem/core";
import { agentConsumerName, connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { createOwnerId, silentLogger } from "@idem/runtime";
import type { Config } from "@idem/schema";
import { startNatsServer, tempJournal } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { createExecutor } from "../src/index.js";
import { runCounts, testConfig, waitFor } from "./helpers.js";

describe("a JetStream delivery whose job is held by a live process", () => {
  it("waits in place for the claim to end and runs the job on that delivery", async () => {
    await using nats = await startNatsServer();
    const nc = await connectNats(nats.url, "live-holder-test");
    await using tj = await tempJournal();
    const config = testConfig({
      dir: tj.dir,
      journalPath: tj.path,
      natsUrl: nats.url,
      // The heartbeat (a third of the ack wait) is when the waiting delivery reads the row again.
      queue: { ackWaitMs: 6_000, maxAckPending: 1 },
    });
    const natsConfig = config.nats as NonNullable<Config["nats"]>;
    const counts = join(tj.dir, "counts");
    const job = { jobId: "live-1", agent: "writer", input: { countFile: counts } };
    const executor = createExecutor({ config, journal: tj.journal, logger: silentLogger() });
    try {
      const jsm = await jetstreamManager(nc);
      await ensureJobsStream(jsm, natsConfig);
      const publisher = createJobPublisher({ js: jetstream(nc), nats: natsConfig });
      await enqueueJob(job, { journal: tj.journal, publisher });
      const holder = await tj.journal.jobs.claim(job, { owner: createOwnerId(), leaseMs: 8_000 });
      expect(holder.status).toBe("acquired");

      await executor.start();
      await waitFor("the output", () => tj.journal.outputs.has("live-1"));
      await waitFor("the ack", async () => {
        const info = await jsm.consumers.info(natsConfig.stream, agentConsumerName("writer"));
        return info.num_ack_pending === 0 && info.num_pending === 0;
      });
      const info = await jsm.consumers.info(natsConfig.stream, agentConsumerName("writer"));
      expect(info.delivered.consumer_seq).toBe(1);
      expect(await runCounts(counts)).toEqual({ "live-1": 1 });
      // The live holder's claim (8 s, longer than the executor takes to start) ran out, not ended
      // by a takeover: then the delivery that waited for it took it.
      expect(await tj.journal.jobs.get("live-1")).toMatchObject({ state: "done", deliveries: 2 });
    } finally {
      await executor.stop();
      await nc.close();
    }
  });
});
