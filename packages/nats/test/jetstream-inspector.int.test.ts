import { type defaultConfig, isIdemError, type NatsConfig } from "@idem/schema";
import { type NatsServerHandle, startNatsServer } from "@idem/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectNats,
  createJetStreamPublishTransport,
  differences,
  ensureAgentConsumer,
  ensureJobsStream,
  expectedAgentConsumer,
  expectedJobsStream,
  inspectAgentConsumer,
  inspectJobsStream,
  inspectPublishStream,
  type JetStreamInspector,
  openJetStreamInspector,
  patternCovers,
} from "../src/index.js";

let server: NatsServerHandle;
let nc: NatsConnection;
let inspector: JetStreamInspector;
let n = 0;

function natsConfig(): NatsConfig {
  n += 1;
  return {
    url: server.url,
    stream: `I${n}_JOBS`,
    subjectPrefix: `i${n}`,
    duplicateWindowMs: 60_000,
    maxAgeMs: 3_600_000,
    publishRetryMs: 5_000,
    servers: [],
    replicas: 1,
  };
}

const queue = (): ReturnType<typeof defaultConfig>["queue"] => ({
  ackWaitMs: 2_000,
  maxDeliver: 3,
  backoffMs: [500, 1_000],
  maxAckPending: 2,
  pollMs: 100,
  stopGraceMs: 60_000,
});

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, "test");
  inspector = await openJetStreamInspector(server.url, { timeoutMs: 2_000 });
});
afterAll(async () => {
  await inspector?.close();
  await nc?.close();
  await server?.stop();
});

describe("expected config", () => {
  it("states the jobs stream and the agent consumer as provisioning creates them", () => {
    const nats = natsConfig();
    expect(expectedJobsStream(nats).config).toEqual({
      name: nats.stream,
      subjects: [`${nats.subjectPrefix}.jobs.>`],
      storage: "file",
      retention: "limits",
      max_age: 3_600_000 * 1e6,
      duplicate_window: 60_000 * 1e6,
      num_replicas: 1,
    });
    const c = expectedAgentConsumer({ nats, queue: queue() }, "writer");
    expect(c.effectiveAckWaitMs).toBe(500);
    expect(c.fields.find((f) => f.field === "ack_wait")?.expected).toBe(500 * 1e6);
    expect(differences(c.fields, { ...c.config, ack_wait: 500 * 1e6 })).toEqual([]);
  });

  it("reads an absent backoff as none", () => {
    const nats = natsConfig();
    const c = expectedAgentConsumer({ nats, queue: { ...queue(), backoffMs: [] } }, "a");
    const { backoff: _b, ...withoutBackoff } = { ...c.config, backoff: undefined };
    expect(differences(c.fields, withoutBackoff)).toEqual([]);
  });

  it("covers a prefix only with a pattern that captures everything under it", () => {
    expect(patternCovers("ev.>", "ev")).toBe(true);
    expect(patternCovers(">", "ev.a")).toBe(true);
    expect(patternCovers("ev.*", "ev")).toBe(false);
    expect(patternCovers("ev.*.>", "ev.x")).toBe(true);
    expect(patternCovers("other.>", "ev")).toBe(false);
  });
});

describe("JetStream inspector", () => {
  it("answers missing before provisioning and no difference after it", async () => {
    const nats = natsConfig();
    expect(await inspectJobsStream(inspector, nats)).toBe("missing");
    expect(await inspectAgentConsumer(inspector, { nats, queue: queue() }, "w")).toBe("missing");
    const jsm = await jetstreamManager(nc);
    await ensureJobsStream(jsm, nats);
    await ensureAgentConsumer(jsm, { nats, queue: queue() }, "w");
    expect(await inspectJobsStream(inspector, nats)).toEqual([]);
    expect(await inspectAgentConsumer(inspector, { nats, queue: queue() }, "w")).toEqual([]);
  });

  it("names the fields that differ from the config, and never changes them", async () => {
    const nats = natsConfig();
    const jsm = await jetstreamManager(nc);
    await ensureJobsStream(jsm, nats);
    await ensureAgentConsumer(jsm, { nats, queue: queue() }, "w");
    const changed = { ...nats, maxAgeMs: 7_200_000 };
    expect(await inspectJobsStream(inspector, changed)).toEqual([
      { field: "max_age", expected: 7_200_000 * 1e6, actual: 3_600_000 * 1e6, immutable: false },
    ]);
    const diff = await inspectAgentConsumer(
      inspector,
      { nats, queue: { ...queue(), maxDeliver: 5 } },
      "w",
    );
    expect(diff).toEqual([{ field: "max_deliver", expected: 5, actual: 3, immutable: false }]);
    expect((await jsm.streams.info(nats.stream)).config.max_age).toBe(3_600_000 * 1e6);
  });

  it("reads a publish target's stream: missing, capturing, or not", async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "INSPECT_EV", subjects: ["ev.>"] });
    expect(await inspectPublishStream(inspector, { stream: "NOPE", subjectPrefix: "ev" })).toBe(
      "missing",
    );
    expect(
      await inspectPublishStream(inspector, { stream: "INSPECT_EV", subjectPrefix: "ev" }),
    ).toEqual({ subjects: ["ev.>"], captures: true, replicas: 1 });
    expect(
      await inspectPublishStream(inspector, { stream: "INSPECT_EV", subjectPrefix: "other" }),
    ).toEqual({ subjects: ["ev.>"], captures: false, replicas: 1 });
  });

  it("does not wait past its timeout for a server that is not there", async () => {
    const started = Date.now();
    await expect(
      openJetStreamInspector("nats://127.0.0.1:1", { timeoutMs: 300 }),
    ).rejects.toBeInstanceOf(Error);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("JetStream publish transport", () => {
  it("publishes with a msg id once, answers a repeat as duplicate, and checks the target stream", async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "TRANSPORT_EV", subjects: ["tx.>"], duplicate_window: 60e9 });
    const transport = createJetStreamPublishTransport();
    try {
      expect(
        await transport.checkStream(server.url, { stream: "TRANSPORT_EV", subjectPrefix: "tx" }),
      ).toEqual({ status: "ok" });
      expect(
        await transport.checkStream(server.url, { stream: "TRANSPORT_EV", subjectPrefix: "no" }),
      ).toEqual({ status: "uncovered", subjects: ["tx.>"] });
      expect(
        (await transport.checkStream(server.url, { stream: "GONE", subjectPrefix: "tx" })).status,
      ).toBe("missing");
      const message = {
        subject: "tx.a",
        data: new TextEncoder().encode("1"),
        msgId: "k/0",
        headers: { "X-A": "b" },
        stream: "TRANSPORT_EV",
      };
      const a = await transport.publish(server.url, message);
      const b = await transport.publish(server.url, message);
      expect(a).toEqual({ stream: "TRANSPORT_EV", seq: a.seq, duplicate: false });
      expect(b).toEqual({ stream: "TRANSPORT_EV", seq: a.seq, duplicate: true });
      const err = await transport
        .publish(server.url, { ...message, msgId: "k/1", stream: "OTHER" })
        .catch((e) => e);
      expect(isIdemError(err, "TARGET_CONFLICT")).toBe(true);
    } finally {
      await transport.close();
    }
  });

  it("answers UNAVAILABLE when it cannot connect", async () => {
    const transport = createJetStreamPublishTransport();
    try {
      const err = await transport
        .checkStream("nats://127.0.0.1:1", { stream: "S", subjectPrefix: "x" })
        .catch((e) => e);
      expect(isIdemError(err, "UNAVAILABLE")).toBe(true);
    } finally {
      await transport.close();
    }
  });
});
