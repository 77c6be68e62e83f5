import { randomBytes } from "node:crypto";
import { closeNats, connectNats, createJetStreamPublishTransport } from "@idem/nats";
import { isIdemError } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEffects } from "../src/index.js";
import { sandbox } from "./helpers.js";

const URL = "nats://127.0.0.1:4222";

type Connection = Awaited<ReturnType<typeof connectNats>>;

interface ApiAnswer {
  error?: { description: string };
  message?: { subject: string; hdrs: string; data: string };
}

/** One JetStream API request on the plain connection (the test needs no JetStream client). */
async function jsApi(nc: Connection, subject: string, body: unknown): Promise<ApiAnswer> {
  const reply = await nc.request(`$JS.API.${subject}`, JSON.stringify(body), { timeout: 5_000 });
  const answer = reply.json<ApiAnswer>();
  if (answer.error) throw new Error(`${subject}: ${answer.error.description}`);
  return answer;
}

describe("nats.publish (shared nats-server at 127.0.0.1:4222, through the @idem/nats transport)", () => {
  let nc: Connection;
  const transport = createJetStreamPublishTransport();
  const stream = `EFFECTS_TEST_${randomBytes(4).toString("hex").toUpperCase()}`;
  const prefix = `efx${randomBytes(3).toString("hex")}`;
  beforeAll(async () => {
    nc = await connectNats(URL, "effects-test");
    await jsApi(nc, `STREAM.CREATE.${stream}`, {
      name: stream,
      subjects: [`${prefix}.>`],
      storage: "file",
      retention: "limits",
      duplicate_window: 60_000_000_000,
    });
  });
  afterAll(async () => {
    await transport.close();
    await jsApi(nc, `STREAM.DELETE.${stream}`, {}).catch(() => {});
    await closeNats(nc);
  });

  it("publishes with the key as Nats-Msg-Id; a repeat is deduplicated by the stream", async () => {
    const sb = sandbox();
    sb.config.publish.events = { subjectPrefix: prefix, stream, url: null };
    const fx = createEffects(sb.config, { natsUrl: URL, publishTransport: transport });
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
      const { message } = await jsApi(nc, `STREAM.MSG.GET.${stream}`, { seq: a.seq });
      if (!message) throw new Error("no message");
      expect(message.subject).toBe(`${prefix}.orders.created`);
      const headers = Buffer.from(message.hdrs, "base64").toString();
      expect(headers).toMatch(/\r\nNats-Msg-Id: n-1\/0\r\n/);
      expect(JSON.parse(Buffer.from(message.data, "base64").toString())).toEqual({ id: 1 });
    } finally {
      await fx.close();
      sb.cleanup();
    }
  });

  it("refuses a target whose stream does not capture its prefix, and reserved headers", async () => {
    const sb = sandbox();
    sb.config.publish.wrong = { subjectPrefix: "elsewhere", stream, url: null };
    sb.config.publish.events = { subjectPrefix: prefix, stream, url: null };
    const fx = createEffects(sb.config, { natsUrl: URL, publishTransport: transport });
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

  it("refuses a target whose stream is missing and cannot be made (its subjects taken) with TARGET_MISSING", async () => {
    const sb = sandbox();
    sb.config.publish.gone = { subjectPrefix: prefix, stream: `${stream}_GONE`, url: null };
    const fx = createEffects(sb.config, { natsUrl: URL, publishTransport: transport });
    try {
      await expect(
        fx.apply({ kind: "nats.publish", target: "gone", subject: "x", data: 1 }, "n-3/0"),
      ).rejects.toSatisfy((e) => isIdemError(e, "TARGET_MISSING"));
    } finally {
      await fx.close();
      sb.cleanup();
    }
  });

  it("makes a target's stream the server does not have (a lost store), and publishes into it", async () => {
    const sb = sandbox();
    const lost = `${stream}_LOST`;
    const lostPrefix = `${prefix}lost`;
    sb.config.publish.lost = { subjectPrefix: lostPrefix, stream: lost, url: null };
    const fx = createEffects(sb.config, { natsUrl: URL, publishTransport: transport });
    try {
      const spec = { kind: "nats.publish" as const, target: "lost", subject: "x", data: 1 };
      expect(await fx.apply(spec, "n-4/0")).toMatchObject({ stream: lost, duplicate: false });
      const info = (await jsApi(nc, `STREAM.INFO.${lost}`, {})) as unknown as {
        config: { subjects: string[]; duplicate_window: number; storage: string };
        state: { messages: number };
      };
      expect(info.config.subjects).toEqual([`${lostPrefix}.>`]);
      expect(info.config.duplicate_window).toBe(3_600_000_000_000);
      expect(info.state.messages).toBe(1);
    } finally {
      await fx.close();
      await jsApi(nc, `STREAM.DELETE.${lost}`, {}).catch(() => {});
      sb.cleanup();
    }
  });
});
