import { enqueueJob, enqueueJobs } from "@idem/core";
import type { SqliteJournalStore } from "@idem/journal";
import { connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import { isIdemError } from "@idem/schema";
import { type NatsServerHandle, startNatsServer, tempJournal } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExecutor } from "../src/index.js";
import { countFile, runCounts, testConfig, waitFor } from "./helpers.js";

let server: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, "enqueue-test");
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

describe("enqueueJob on JetStream with a FULL journal", () => {
  it("fsyncs the outbox row before it answers a failed publish, not before a good one; the executor publishes it later", async () => {
    await using tj = await tempJournal({ synchronous: "FULL" });
    const config = testConfig({ dir: tj.dir, journalPath: tj.path, natsUrl: server.url });
    if (!config.nats) throw new Error("nats config");
    const input = { countFile: countFile(tj.dir) };
    const fsyncs = () => (tj.journal as SqliteJournalStore).fsyncs;
    // No stream captures the subject yet: every publish attempt finds no responder.
    const publisher = createJobPublisher({
      js: jetstream(nc),
      nats: { ...config.nats, publishRetryMs: 300 },
      attemptTimeoutMs: 200,
    });
    const before = fsyncs();
    const err = await enqueueJob(
      { jobId: "lost-publish", agent: "writer", input },
      { journal: tj.journal, publisher },
    ).catch((e: unknown) => e);
    expect(isIdemError(err, "UNAVAILABLE")).toBe(true);
    expect(fsyncs()).toBeGreaterThan(before);
    expect((await tj.journal.jobs.get("lost-publish"))?.state).toBe("queued");
    expect(
      await tj.journal.events.list({ jobId: "lost-publish", type: "job.publish-failed" }),
    ).toHaveLength(1);

    await ensureJobsStream(await jetstreamManager(nc), config.nats);
    const quiet = fsyncs();
    const ok = await enqueueJob(
      { jobId: "published", agent: "writer", input },
      { journal: tj.journal, publisher },
    );
    expect(ok.duplicate).toBe(false);
    expect(fsyncs()).toBe(quiet); // the PubAck answered it: no fsync of the outbox row

    // The outbox row of the failed publish is republished by the executor when it starts.
    const ex = createExecutor({ config, journal: tj.journal, logger: silentLogger(), pollMs: 20 });
    await ex.start();
    try {
      await waitFor(
        "both outputs",
        async () =>
          (await tj.journal.outputs.has("lost-publish")) &&
          (await tj.journal.outputs.has("published")),
      );
      expect(await runCounts(countFile(tj.dir))).toEqual({ "lost-publish": 1, published: 1 });
    } finally {
      await ex.stop();
    }
  });

  it("enqueueJobs stops at a stream that gives no PubAck: jobs in flight stay in the outbox, the rest are not written", async () => {
    await using tj = await tempJournal({ synchronous: "FULL" });
    const config = testConfig({ dir: tj.dir, journalPath: tj.path, natsUrl: server.url });
    if (!config.nats) throw new Error("nats config");
    // No stream captures the subject: every publish finds no responder until publishRetryMs ends.
    const publisher = createJobPublisher({
      js: jetstream(nc),
      nats: { ...config.nats, publishRetryMs: 300 },
      attemptTimeoutMs: 200,
    });
    const jobs = Array.from({ length: 6 }, (_, i) => ({
      jobId: `stop-${i}`,
      agent: "writer",
      input: { i },
    }));
    const r = await enqueueJobs(jobs, { journal: tj.journal, publisher, concurrency: 2 });
    expect(isIdemError(r.stoppedBy, "UNAVAILABLE")).toBe(true);
    expect(r.outcomes.map((o) => (o && "error" in o ? o.error.code : o))).toEqual([
      "UNAVAILABLE",
      "UNAVAILABLE",
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect((await tj.journal.jobs.pending({ since: 0 })).map((j) => j.jobId).sort()).toEqual([
      "stop-0",
      "stop-1",
    ]);

    // Once the stream exists, the same batch again: the two are published, the rest enqueued.
    await ensureJobsStream(await jetstreamManager(nc), config.nats);
    const again = await enqueueJobs(jobs, { journal: tj.journal, publisher, concurrency: 2 });
    expect(again.stoppedBy).toBeUndefined();
    const outcomes = again.outcomes as { seq: number; duplicate: boolean }[];
    expect(outcomes.map((o) => o.duplicate)).toEqual([true, true, false, false, false, false]);
    const info = await (await jetstreamManager(nc)).streams.info(config.nats.stream);
    expect(info.state.messages).toBe(6);
  });
});
