// `idem dlq retry` whose publish fails (NATS down): the dead letter is resolved and the job queued
// again in the journal, but no message carries it. The running executor, once reconnected,
// publishes it from the outbox under the retry's msg id, and the job runs (an executor starting
// later does the same at start). Before, the job's row still named the dead-lettered message,
// which the stream still held, so the job stayed queued forever.
import { join } from "node:path";
import { enqueueJob, retryDeadLetter } from "@idem/core";
import { connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import { type Config, isIdemError } from "@idem/schema";
import { startNatsServer, tempJournal } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { createExecutor, type Executor } from "../src/index.js";
import { runCounts, testConfig, waitFor } from "./helpers.js";

describe("dlq retry on JetStream whose publish failed", () => {
  it("is published by the running executor's outbox once NATS is back, under the retry's msg id, and runs", async () => {
    await using nats = await startNatsServer();
    const tj = await tempJournal();
    const executors: Executor[] = [];
    const counts = join(tj.dir, "counts");
    try {
      const config = testConfig({
        dir: tj.dir,
        journalPath: tj.path,
        natsUrl: nats.url,
        queue: { maxDeliver: 1 },
      });
      const natsConfig = {
        ...(config.nats as NonNullable<Config["nats"]>),
        publishRetryMs: 1_000,
      };
      const start = async () => {
        const ex = createExecutor({ config, journal: tj.journal, logger: silentLogger() });
        executors.push(ex);
        await ex.start();
        return ex;
      };

      // The first delivery fails (maxDeliver 1): dead-lettered.
      let nc = await connectNats(nats.url, "retry-unpublished-test");
      await ensureJobsStream(await jetstreamManager(nc), natsConfig);
      await start();
      await enqueueJob(
        { jobId: "lost-retry", agent: "writer", input: { countFile: counts, failTimes: 1 } },
        {
          journal: tj.journal,
          publisher: createJobPublisher({ js: jetstream(nc), nats: natsConfig }),
        },
      );
      await waitFor("the dead letter", async () => {
        const d = await tj.journal.deadLetters.list({ unresolved: true });
        return d.length > 0;
      });
      const before = await tj.journal.jobs.get("lost-retry");
      expect(before?.streamSeq).toBeGreaterThan(0);

      // A person retries it while NATS is down: the journal says queued, no message was published.
      await nats.kill("SIGKILL");
      const publisher = createJobPublisher({ js: jetstream(nc), nats: natsConfig });
      const failed = await retryDeadLetter("lost-retry", { journal: tj.journal, publisher }).catch(
        (e: unknown) => e,
      );
      expect(isIdemError(failed, "UNAVAILABLE")).toBe(true);
      const queued = await tj.journal.jobs.get("lost-retry");
      expect(queued?.state).toBe("queued");
      expect(queued?.streamSeq).toBeNull();
      expect(await tj.journal.deadLetters.list({ unresolved: true })).toEqual([]);
      await nc.close();

      // NATS is back; the executor reconnects, its outbox publishes the retry, and the job runs.
      await nats.restart();
      await waitFor("the retried job's output", () => tj.journal.outputs.has("lost-retry"));
      expect(await runCounts(counts)).toEqual({ "lost-retry": 2 });
      nc = await connectNats(nats.url, "retry-unpublished-check");
      const jsm = await jetstreamManager(nc);
      const seq = (await tj.journal.jobs.get("lost-retry"))?.streamSeq ?? 0;
      const msg = await jsm.streams.getMessage(natsConfig.stream, { seq });
      expect(msg?.header?.get("Nats-Msg-Id")).toBe("lost-retry#retry-1");
      await nc.close();
    } finally {
      await Promise.all(executors.map((e) => e.stop()));
      await tj.dispose();
    }
  }, 300_000);
});
