import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SlackStandIn, startSlackStandIn } from "../src/index.js";

const T0 = Date.parse("2026-01-05T10:00:00.250Z");
let clock = T0;
let slack: SlackStandIn;
let channel: string;

type Answer = Record<string, unknown> & { ok: boolean; error?: string };

/** A form-encoded call with the token in the Authorization header, as @slack/web-api makes it. */
async function form(method: string, args: Record<string, string>, token = slack.token) {
  const res = await fetch(`${slack.url}/api/${method}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams(args).toString(),
  });
  return { res, body: (await res.json()) as Answer };
}

async function json(method: string, args: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${slack.url}/api/${method}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${slack.token}`,
      "content-type": "application/json; charset=utf-8",
      ...headers,
    },
    body: JSON.stringify(args),
  });
  return { res, body: (await res.json()) as Answer };
}

const META = { event_type: "idem_effect", event_payload: { key: "k-1" } };

beforeEach(async () => {
  clock = T0;
  slack = await startSlackStandIn({ now: () => clock });
  channel = slack.createChannel({ name: "deploys" });
});

afterEach(async () => {
  await slack.stop();
});

describe("Slack stand-in: chat.postMessage and conversations.history", () => {
  it("posts with metadata and gives it back from history with include_all_metadata only", async () => {
    const { body } = await form("chat.postMessage", {
      channel,
      text: "deployed",
      metadata: JSON.stringify(META),
    });
    expect(body).toMatchObject({
      ok: true,
      channel,
      message: { text: "deployed", metadata: META },
    });
    expect(body.ts).toBe("1767607200.250000");
    const all = await form("conversations.history", { channel, include_all_metadata: "true" });
    expect(all.body).toMatchObject({
      ok: true,
      has_more: false,
      messages: [{ ts: body.ts, metadata: META }],
    });
    const plain = await form("conversations.history", { channel });
    expect((plain.body.messages as object[])[0]).not.toHaveProperty("metadata");
    expect(slack.posts()).toBe(1);
    slack.assertNoViolations();
  });

  it("takes JSON bodies, warns missing_charset, and does not read a token inside them", async () => {
    const ok = await json(
      "chat.postMessage",
      { channel: "#deploys", text: "hi", metadata: META },
      {
        "content-type": "application/json",
      },
    );
    expect(ok.body).toMatchObject({
      ok: true,
      channel,
      response_metadata: { warnings: ["missing_charset"] },
    });
    const res = await fetch(`${slack.url}/api/chat.postMessage`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ token: slack.token, channel, text: "x" }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: false, error: "not_authed" });
    expect(slack.posts()).toBe(1);
  });

  it("pages history newest first with Slack's cursors, inside oldest and latest", async () => {
    for (let i = 0; i < 7; i++)
      slack.addMessage(channel, { text: `m${i}`, at: T0 - 60_000 + i * 1000 });
    const oldest = "1767607142.250000"; // m2 itself: excluded unless inclusive
    const texts: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const args: Record<string, string> = { channel, oldest, limit: "2" };
      if (cursor) args.cursor = cursor;
      const { body } = await form("conversations.history", args);
      texts.push(...(body.messages as { text: string }[]).map((m) => m.text));
      cursor = (body.response_metadata as { next_cursor?: string } | undefined)?.next_cursor;
      if (cursor) expect(Buffer.from(cursor, "base64").toString()).toMatch(/^next_ts:\d{16}$/);
      expect(body.has_more).toBe(cursor !== undefined);
      pages++;
    } while (cursor);
    expect(texts).toEqual(["m6", "m5", "m4", "m3"]);
    expect(pages).toBe(2);
    const inclusive = await form("conversations.history", {
      channel,
      oldest,
      inclusive: "true",
      latest: "1767607143.250000",
    });
    expect((inclusive.body.messages as { text: string }[]).map((m) => m.text)).toEqual([
      "m3",
      "m2",
    ]);
    expect((await form("conversations.history", { channel, cursor: "bm9wZQ==" })).body.error).toBe(
      "invalid_cursor",
    );
    expect((await form("conversations.history", { channel, oldest: "yesterday" })).body.error).toBe(
      "invalid_ts_oldest",
    );
  });

  it("makes unique, increasing timestamps within one millisecond", async () => {
    const a = await form("chat.postMessage", { channel, text: "a" });
    const b = await form("chat.postMessage", { channel, text: "b" });
    expect(a.body.ts).toBe("1767607200.250000");
    expect(b.body.ts).toBe("1767607200.250001");
  });

  it("keeps thread replies out of the channel's history unless broadcast", async () => {
    const parent = await form("chat.postMessage", { channel, text: "parent" });
    await form("chat.postMessage", { channel, text: "reply", thread_ts: String(parent.body.ts) });
    await form("chat.postMessage", {
      channel,
      text: "loud",
      thread_ts: String(parent.body.ts),
      reply_broadcast: "true",
    });
    const { body } = await form("conversations.history", { channel });
    expect((body.messages as { text: string }[]).map((m) => m.text)).toEqual(["loud", "parent"]);
    expect(slack.messages(channel)).toHaveLength(3);
  });
});

describe("Slack stand-in: errors as Slack answers them", () => {
  it("answers not_authed, invalid_auth, channel_not_found and not_in_channel with HTTP 200", async () => {
    const noToken = await fetch(`${slack.url}/api/auth.test`, { method: "POST" });
    expect(noToken.status).toBe(200);
    expect(await noToken.json()).toEqual({ ok: false, error: "not_authed" });
    expect((await form("auth.test", {}, "xoxb-wrong")).body.error).toBe("invalid_auth");
    expect((await form("auth.test", {})).body).toMatchObject({
      ok: true,
      user_id: slack.identity.userId,
    });
    expect((await form("chat.postMessage", { channel: "C0NOPE", text: "x" })).body.error).toBe(
      "channel_not_found",
    );
    const outside = slack.createChannel({ name: "elsewhere", member: false });
    expect((await form("chat.postMessage", { channel: outside, text: "x" })).body.error).toBe(
      "not_in_channel",
    );
    expect((await form("conversations.history", { channel: outside })).body.error).toBe(
      "not_in_channel",
    );
    expect((await form("conversations.join", { channel: outside })).body.ok).toBe(true);
    expect((await form("chat.postMessage", { channel: outside, text: "x" })).body.ok).toBe(true);
    expect(slack.violations().map((v) => v.error)).toEqual([
      "not_authed",
      "invalid_auth",
      "channel_not_found",
      "not_in_channel",
      "not_in_channel",
    ]);
  });

  it("answers invalid_arguments for a missing channel, and records unknown arguments", async () => {
    const { body } = await form("chat.postMessage", { text: "x" });
    expect(body).toEqual({
      ok: false,
      error: "invalid_arguments",
      response_metadata: { messages: ["[ERROR] missing required field: channel"] },
    });
    expect((await form("chat.postMessage", { channel })).body.error).toBe("no_text");
    expect(
      (await form("chat.postMessage", { channel, text: "x", idempotency_key: "k" })).body.ok,
    ).toBe(true);
    expect(slack.violations()).toMatchObject([
      { method: "chat.postMessage", rejected: true, error: "invalid_arguments" },
      { rejected: true, error: "no_text" },
      { rejected: false, problems: ['unknown argument "idempotency_key": Slack ignores it'] },
    ]);
  });

  it("refuses malformed metadata, and drops metadata whose event_type Slack does not allow", async () => {
    const bad = await form("chat.postMessage", {
      channel,
      text: "x",
      metadata: '{"event_type":1}',
    });
    expect(bad.body.error).toBe("invalid_metadata_format");
    const dotted = await form("chat.postMessage", {
      channel,
      text: "x",
      metadata: JSON.stringify({ event_type: "idem.effect", event_payload: { key: "k" } }),
    });
    expect(dotted.body).toMatchObject({
      ok: true,
      response_metadata: { warnings: ["invalid_metadata_schema"] },
    });
    expect(slack.messages(channel)[0]?.metadata).toBeUndefined();
  });
});

describe("Slack stand-in: rate limits and the crash window", () => {
  it("answers ratelimited with HTTP 429 and Retry-After, then serves again", async () => {
    slack.rateLimit({ retryAfterSeconds: 3, match: (c) => c.method === "chat.postMessage" });
    const limited = await form("chat.postMessage", { channel, text: "x" });
    expect(limited.res.status).toBe(429);
    expect(limited.res.headers.get("retry-after")).toBe("3");
    expect(limited.body).toEqual({ ok: false, error: "ratelimited" });
    expect(slack.posts()).toBe(0);
    expect((await form("chat.postMessage", { channel, text: "x" })).body.ok).toBe(true);
    expect(slack.rateLimitRefusals()).toBe(1);
  });

  it("stores a post and then drops the connection: history finds it by its metadata", async () => {
    slack.dropAfterPost({ match: (p) => p.metadata?.event_payload.key === "k-1" });
    await expect(
      form("chat.postMessage", { channel, text: "x", metadata: JSON.stringify(META) }),
    ).rejects.toThrow(TypeError);
    expect(slack.posts()).toBe(1);
    expect(slack.requests().at(-1)).toMatchObject({
      method: "chat.postMessage",
      dropped: true,
      status: 0,
    });
    const { body } = await form("conversations.history", {
      channel,
      oldest: String((T0 - 1000) / 1000),
      include_all_metadata: "true",
    });
    expect(body.messages).toMatchObject([{ metadata: META }]);
  });

  it("drops before storing when asked, and injects errors on demand", async () => {
    slack.dropBeforePost();
    await expect(form("chat.postMessage", { channel, text: "x" })).rejects.toThrow(TypeError);
    expect(slack.messages(channel)).toEqual([]);
    slack.failNext({ error: "service_unavailable", status: 503 });
    const failed = await form("chat.postMessage", { channel, text: "x" });
    expect(failed.res.status).toBe(503);
    expect(failed.body).toEqual({ ok: false, error: "service_unavailable" });
    expect(slack.posts()).toBe(0);
  });
});
