import { connectNats, ensureAgentConsumer, ensureJobsStream } from "@idem/nats";
import { parseConfig } from "@idem/schema";
import { type NatsServerHandle, startNatsServer } from "@idem/testing";
// Provisioning through the JetStream client is test setup only (tests sit outside the import rules).
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDoctor } from "../src/doctor/run-doctor.js";

let nats: NatsServerHandle;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats[Symbol.asyncDispose]();
});

function config(extra: Record<string, unknown> = {}) {
  const r = parseConfig(
    {
      nats: { url: nats.url, stream: "DOC_JOBS", subjectPrefix: "doc" },
      agents: { writer: { command: ["node"] } },
      queue: { maxDeliver: 3, backoffMs: [1000, 2000], ackWaitMs: 30_000 },
      ...extra,
    },
    { dir: "/tmp" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

describe("runDoctor against a real nats-server", () => {
  it("reads the stream and consumers back: missing is a warning, as provisioned is clean, a changed consumer is a violation", async () => {
    const c = config();
    const before = await runDoctor(c);
    expect(before.findings.map((f) => [f.severity, f.key])).toEqual(
      expect.arrayContaining([["warning", "nats.stream"]]),
    );
    expect(before.ok).toBe(true);

    const nc = await connectNats(nats.url);
    try {
      const jsm = await jetstreamManager(nc);
      await ensureJobsStream(jsm, c.nats as NonNullable<typeof c.nats>);
      await ensureAgentConsumer(
        jsm,
        { queue: c.queue, nats: c.nats as NonNullable<typeof c.nats> },
        "writer",
      );
      const clean = await runDoctor(c);
      expect(clean.findings.filter((f) => f.key !== "journal.path")).toEqual([]);

      // The config now asks for another maxDeliver than the consumer on the server has.
      const changed = await runDoctor(
        config({ queue: { maxDeliver: 5, backoffMs: [1000, 2000], ackWaitMs: 30_000 } }),
      );
      expect(changed.ok).toBe(false);
      expect(
        changed.findings.some(
          (f) => f.severity === "violation" && f.finding.startsWith("max_deliver"),
        ),
      ).toBe(true);

      // A publish target whose stream does not capture its prefix.
      await jsm.streams.add({ name: "EVENTS", subjects: ["other.>"] });
      const pub = await runDoctor(
        config({ publish: { ev: { subjectPrefix: "events", stream: "EVENTS" } } }),
      );
      expect(pub.findings.map((f) => f.key)).toContain("publish.ev.stream");
    } finally {
      await nc.close();
    }
  });
});
