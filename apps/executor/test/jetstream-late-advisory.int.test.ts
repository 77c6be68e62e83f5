// A late JetStream dead-letter advisory after `idem dlq retry` (issue 18): the advisory of the first
// message (terminated once the job was dead-lettered) reaches an executor after a person retried the
// job, so the job's current message is the retry's. It must not dead-letter the retried job again
// (it did: under load the retried job's output never came). The advisory is JetStream's own message,
// taken from the dead-letter stream and delivered again; the executor that handles it runs another
// agent, so the retried job is still queued when it does, deterministically.
import { join } from "node:path";
import { enqueueJob, retryDeadLetter } from "@idem/core";
import {
  connectNats,
  createJobPublisher,
  DEAD_LETTER_CONSUMER,
  deadLetterStreamName,
  ensureJobsStream,
} from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import type { Config } from "@idem/schema";
import { startNatsServer, tempJournal } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { createExecutor, type Executor } from "../src/index.js";
import { runCounts, testConfig, waitFor } from "./helpers.js";

describe("a late dead-letter advisory on JetStream", () => {
  it("does not dead-letter a job again once dlq retry republished it", async () => {
    await using nats = await startNatsServer();
    const nc = await connectNats(nats.url, "late-advisory-test");
    const tj = await tempJournal();
    const executors: Executor[] = [];
    try {
      const config = testConfig({
        dir: tj.dir,
        journalPath: tj.path,
        natsUrl: nats.url,
        queue: { maxDeliver: 1 },
      });
      const natsConfig = config.nats as NonNullable<Config["nats"]>;
      const jsm = await jetstreamManager(nc);
      const js = jetstream(nc);
      await ensureJobsStream(jsm, natsConfig);
      const publisher = createJobPublisher({ js, nats: natsConfig });
      const start = async (c: Config) => {
        const ex = createExecutor({ config: c, journal: tj.journal, logger: silentLogger() });
        executors.push(ex);
        await ex.start();
        return ex;
      };
      const dlStream = deadLetterStreamName(natsConfig.stream);
      const advisoriesHandled = (n: number) =>
        waitFor(`${n} dead-letter advisories handled`, async () => {
          const c = await jsm.consumers.info(dlStream, DEAD_LETTER_CONSUMER);
          return c.delivered.stream_seq >= n && c.num_pending + c.num_ack_pending === 0;
        });
      const counts = join(tj.dir, "counts");

      // The first delivery fails (maxDeliver 1): dead-lettered, terminated, its advisory handled.
      const writer = await start(config);
      await enqueueJob(
        { jobId: "late-1", agent: "writer", input: { countFile: counts, failTimes: 1 } },
        { journal: tj.journal, publisher },
      );
      await waitFor("the dead letter", async () => {
        const d = await tj.journal.deadLetters.list({ unresolved: true });
        return d.length > 0;
      });
      await advisoriesHandled(1);
      const advisory = await jsm.streams.getMessage(dlStream, { seq: 1 });
      expect(advisory?.subject).toContain(".MSG_TERMINATED.");
      await writer.stop();

      // A person retries it: a new message; nobody runs the writer agent yet.
      const retry = await retryDeadLetter("late-1", { journal: tj.journal, publisher });
      expect(retry.retry).toBe(1);
      const other = { ...config, agents: { other: config.agents.writer } } as Config;
      await start(other);
      // The first message's advisory arrives now, late.
      await js.publish(advisory?.subject ?? "", advisory?.data);
      await advisoriesHandled(2);
      expect(await tj.journal.deadLetters.list({ unresolved: true })).toEqual([]);
      expect((await tj.journal.jobs.get("late-1"))?.state).toBe("queued");

      // The retried job runs and its output is recorded.
      await start(config);
      await waitFor("the retried job's output", () => tj.journal.outputs.has("late-1"));
      expect(await runCounts(counts)).toEqual({ "late-1": 2 });
      expect(await tj.journal.deadLetters.list({ unresolved: true })).toEqual([]);
    } finally {
      await Promise.all(executors.map((e) => e.stop()));
      await nc.close();
      await tj.dispose();
    }
  }, 300_000);
});
