import { type defaultConfig, isIdemError, type Job, type NatsConfig } from "@idem/schema";
import { type NatsServerHandle, startNatsServer } from "@idem/testing";
import {
  type JsMsg,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentConsumerName,
  closeNats,
  connectNats,
  createJobPublisher,
  type DeadLetterAdvisory,
  ensureAgentConsumer,
  ensureDeadLetterStream,
  ensureJobsStream,
  startDeadLetterMonitor,
  startMessageLoop,
} from "../src/index.js";

let server: NatsServerHandle;
let nc: NatsConnection;
let n = 0;

function natsConfig(): NatsConfig {
  n += 1;
  return {
    url: server.url,
    stream: `T${n}_JOBS`,
    subjectPrefix: `t${n}`,
    duplicateWindowMs: 60_000,
    maxAgeMs: 3_600_000,
    publishRetryMs: 5_000,
    servers: [],
    replicas: 1,
  };
}

function queue(over: Partial<ReturnType<typeof defaultConfig>["queue"]> = {}) {
  return {
    ackWaitMs: 2_000,
    maxDeliver: 3,
    backoffMs: [500, 1_000],
    maxAckPending: 2,
    pollMs: 100,
    stopGraceMs: 60_000,
    ...over,
  };
}

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, "test");
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

describe("provisioning", () => {
  it("creates the jobs stream and reads it back; a second call is a no-op", async () => {
    const jsm = await jetstreamManager(nc);
    const nats = natsConfig();
    const info = await ensureJobsStream(jsm, nats);
    expect(info.config.subjects).toEqual([`${nats.subjectPrefix}.jobs.>`]);
    expect(info.config.duplicate_window).toBe(60_000 * 1e6);
    await ensureJobsStream(jsm, nats);
  });

  it("updates a changed max_age in place", async () => {
    const jsm = await jetstreamManager(nc);
    const nats = natsConfig();
    await ensureJobsStream(jsm, nats);
    const info = await ensureJobsStream(jsm, { ...nats, maxAgeMs: 7_200_000 });
    expect(info.config.max_age).toBe(7_200_000 * 1e6);
  });

  it("refuses a stream it cannot update, naming the field", async () => {
    const jsm = await jetstreamManager(nc);
    const nats = natsConfig();
    await jsm.streams.add({
      name: nats.stream,
      subjects: [`${nats.subjectPrefix}.jobs.>`],
      storage: StorageType.Memory,
      retention: RetentionPolicy.Limits,
    });
    const err = await ensureJobsStream(jsm, nats).catch((e) => e);
    expect(isIdemError(err, "INVARIANT_VIOLATION")).toBe(true);
    expect(err.details.field).toBe("storage");
  });

  it("refuses a duplicate window longer than max_age", async () => {
    const jsm = await jetstreamManager(nc);
    const nats = { ...natsConfig(), duplicateWindowMs: 10_000, maxAgeMs: 5_000 };
    const err = await ensureJobsStream(jsm, nats).catch((e) => e);
    expect(isIdemError(err, "INVARIANT_VIOLATION")).toBe(true);
  });

  it("creates the agent consumer with the effective ack wait of a backoff (backoff[0])", async () => {
    const jsm = await jetstreamManager(nc);
    const nats = natsConfig();
    await ensureJobsStream(jsm, nats);
    const c = await ensureAgentConsumer(jsm, { nats, queue: queue() }, "writer");
    expect(c.name).toBe(agentConsumerName("writer"));
    expect(c.effectiveAckWaitMs).toBe(500);
    expect(c.info.config.max_deliver).toBe(3);
    const again = await ensureAgentConsumer(
      jsm,
      { nats, queue: queue({ maxDeliver: 4 }) },
      "writer",
    );
    expect(again.info.config.max_deliver).toBe(4);
    const plain = await ensureAgentConsumer(
      jsm,
      { nats, queue: queue({ backoffMs: [] }) },
      "plain",
    );
    expect(plain.effectiveAckWaitMs).toBe(2_000);
  });

  it("refuses maxDeliver not above the backoff steps", async () => {
    const jsm = await jetstreamManager(nc);
    const nats = natsConfig();
    await ensureJobsStream(jsm, nats);
    const err = await ensureAgentConsumer(
      jsm,
      { nats, queue: queue({ maxDeliver: 2 }) },
      "w",
    ).catch((e) => e);
    expect(isIdemError(err, "INVARIANT_VIOLATION")).toBe(true);
  });
});

describe("JobPublisher", () => {
  it("stores the same job published twice once and says duplicate", async () => {
    const jsm = await jetstreamManager(nc);
    const nats = natsConfig();
    await ensureJobsStream(jsm, nats);
    const publisher = createJobPublisher({ js: jetstream(nc), nats });
    const job: Job = { jobId: "job-1", agent: "writer", input: { n: 1 } };
    const first = await publisher.publish(job);
    const second = await publisher.publish(job);
    expect(first.duplicate).toBe(false);
    expect(second).toEqual({ ...first, duplicate: true });
    const info = await jsm.streams.info(nats.stream);
    expect(info.state.messages).toBe(1);
    const retry = await publisher.publish(job, { msgId: "job-1#retry-1" });
    expect(retry.duplicate).toBe(false);
    expect(retry.seq).toBe(2);
  });

  it("retries a publish that finds no stream (no responders) until the stream exists, with the same msg id", async () => {
    const jsm = await jetstreamManager(nc);
    const nats = natsConfig();
    const publisher = createJobPublisher({
      js: jetstream(nc),
      nats: { ...nats, publishRetryMs: 60_000 },
    });
    const job: Job = { jobId: "late-1", agent: "writer", input: null };
    const pending = publisher.publish(job);
    // The stream appears while the publisher is still retrying: the job lands in it, once.
    await new Promise((r) => setTimeout(r, 200));
    await ensureJobsStream(jsm, nats);
    const result = await pending;
    expect(result).toMatchObject({ jobId: "late-1", stream: nats.stream, duplicate: false });
    expect((await jsm.streams.info(nats.stream)).state.messages).toBe(1);
  });

  it("gives up with UNAVAILABLE naming the job when no stream captures the subject within publishRetryMs", async () => {
    const nats = { ...natsConfig(), publishRetryMs: 300 };
    const publisher = createJobPublisher({ js: jetstream(nc), nats });
    const err = await publisher
      .publish({ jobId: "nowhere-1", agent: "writer", input: null })
      .catch((e) => e);
    expect(isIdemError(err, "UNAVAILABLE")).toBe(true);
    expect((err as Error).message).toMatch(/nowhere-1/);
  });
});

describe("dead-letter monitor", () => {
  it("hands a terminated job to the handler with its original message", async () => {
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    const nats = natsConfig();
    await ensureJobsStream(jsm, nats);
    await ensureDeadLetterStream(jsm, nats);
    const consumer = await ensureAgentConsumer(jsm, { nats, queue: queue() }, "writer");
    const publisher = createJobPublisher({ js, nats });
    await publisher.publish({ jobId: "dead-1", agent: "writer", input: null });
    const seen: DeadLetterAdvisory[] = [];
    const monitor = await startDeadLetterMonitor({
      js,
      jsm,
      nats,
      onDeadLetter: async (a) => {
        seen.push(a);
      },
    });
    const loop = startMessageLoop({
      js,
      stream: nats.stream,
      consumer: consumer.name,
      concurrency: 1,
      handler: async (m: JsMsg) => m.term(),
    });
    const deadline = Date.now() + 60_000; // far beyond the advisory's arrival on a busy machine
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await loop.stop();
    await monitor.stop();
    expect(seen[0]?.kind).toBe("terminated");
    expect(seen[0]?.job?.jobId).toBe("dead-1");
    expect(seen[0]?.msgId).toBe("dead-1");
    expect(seen[0]?.deliveries).toBe(1);
  });
});

describe("closeNats", () => {
  it("drains a live connection; with the server gone it closes instead of waiting for a reconnect forever", async () => {
    const own = await startNatsServer();
    try {
      const live = await connectNats(own.url);
      expect(await closeNats(live)).toBe(true);
      expect(live.isClosed()).toBe(true);

      const orphan = await connectNats(own.url);
      await own.kill("SIGKILL");
      expect(await closeNats(orphan, 300)).toBe(false);
      expect(orphan.isClosed()).toBe(true);
    } finally {
      await own.stop();
    }
  });
});
