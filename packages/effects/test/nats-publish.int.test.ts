import { randomBytes } from "node:crypto";
import { isIdemError } from "@idem/schema";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEffects } from "../src/index.js";
import { sandbox } from "./helpers.js";

const URL = "nats://127.0.0.1:4222";

describe("nats.publish (shared nats-server at 127.0.0.1:4222)", () => {
  let nc: NatsConnection;
  const stream = `EFFECTS_TEST_${randomBytes(4).toString("hex").toUpperCase()}`;
  const prefix = `efx${randomBytes(3).toString("hex")}`;
  beforeAll(async () => {
    nc = await connect({ servers: URL });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      name: stream,
      subjects: [`${prefix}.>`],
      duplicate_window: 60_000_000_000,
    });
  });
  afterAll(async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(stream).catch(() => {});
    await nc.drain();
  });

  it("publishes with the key as Nats-Msg-Id; a repeat is deduplicated by the stream", async () => {
    const sb = sandbox();
    sb.config.publish.events = { subjectPrefix: prefix, stream, url: null };
    const fx = createEffects(sb.config, { natsUrl: URL });
    try {
      const s = {
        kind: "nats.publish" as const,
        target: "events",
        subject: "orders.created",
        data: { id: 1 },
      };
      expect(fx.probeable(s)).toBe(false);
      expect(fx.targetDedup(s)).toBe(true);
      const a = await fx.apply(s, "n-1/0");
      const b = await fx.apply(s, "n-1/0");
      expect(a).toMatchObject({ stream, duplicate: false });
      expect(b).toMatchObject({ stream, seq: a.seq, duplicate: true });
      const jsm = await jetstreamManager(nc);
      const msg = await jsm.streams.getMessage(stream, { seq: a.seq as number });
      expect(msg?.subject).toBe(`${prefix}.orders.created`);
      expect(msg?.header?.get("Nats-Msg-Id")).toBe("n-1/0");
      expect(msg?.json()).toEqual({ id: 1 });
    } finally {
      await fx.close();
      sb.cleanup();
    }
  });

  it("refuses a target whose stream does not capture its prefix, and reserved headers", async () => {
    const sb = sandbox();
    sb.config.publish.wrong = { subjectPrefix: "elsewhere", stream, url: null };
    sb.config.publish.events = { subjectPrefix: prefix, stream, url: null };
    const fx = createEffects(sb.config, { natsUrl: URL });
    try {
      await expect(
        fx.apply({ kind: "nats.publish", target: "wrong", subject: "x", data: 1 }, "n-2/0"),
      ).rejects.toSatisfy((e) => isIdemError(e, "SANDBOX_VIOLATION"));
      await expect(
        fx.apply(
          {
            kind: "nats.publish",
            target: "events",
            subject: "x",
            data: 1,
            headers: { "Nats-Expected-Stream": "X" },
          },
          "n-2/1",
        ),
      ).rejects.toSatisfy((e) => isIdemError(e, "SANDBOX_VIOLATION"));
    } finally {
      await fx.close();
      sb.cleanup();
    }
  });
});
