import { type OpenedKind, openKind } from "@idem/kit";
import {
  type SlackStandIn,
  type StartSlackStandInOptions,
  skippingClock,
  startSlackStandIn,
} from "@idem/testing";
import { afterEach, describe, expect, it } from "vitest";
import { slackMessageKind } from "../../src/kinds/slack-message/slack-message-kind.js";
import { expectIdemError, fieldOf, interpret, rejection } from "./kind-calls.js";

const TOKEN_ENV = "IDEM_TEST_SLACK_TOKEN";
const spec = (text = "Deploy 42 finished.") => ({ kind: "slack.message", channel: "ops", text });

let sl: SlackStandIn | undefined;
let opened: OpenedKind | undefined;
/** Violations a test provoked on purpose (Slack refuses the call): checked by the test itself. */
let provoked = false;
afterEach(async () => {
  if (!provoked) sl?.assertNoViolations();
  provoked = false;
  await opened?.close();
  await sl?.stop();
  sl = undefined;
  opened = undefined;
});

async function setUp(
  o: {
    member?: boolean;
    archived?: boolean;
    token?: string;
    options?: Record<string, unknown>;
  } & StartSlackStandInOptions = {},
) {
  const clock = skippingClock();
  const { member, archived, token, options, ...standIn } = o;
  sl = await startSlackStandIn({ now: () => clock.now(), ...standIn });
  const ops = sl.createChannel({
    name: "ops",
    member: member ?? true,
    archived: archived ?? false,
  });
  const env: Record<string, string | undefined> = { [TOKEN_ENV]: token ?? sl.token };
  opened = openKind(slackMessageKind, {
    options: { baseUrl: sl.url, tokenEnv: TOKEN_ENV, channels: { ops }, ...options },
    env,
    clock,
  });
  return { sl, k: opened, ops, clock, env };
}

const histories = (s: SlackStandIn, from: number) =>
  s
    .requests()
    .slice(from)
    .filter((r) => r.method === "conversations.history");

describe("slack.message", () => {
  it("is absent before, present after its post, and a second apply posts nothing", async () => {
    const { sl, k, ops } = await setUp();
    const s = k.check(spec());
    const since = Date.now();
    expect((await k.probe(s, "job-1/0", { since })).status).toBe("absent");
    const first = await interpret(k, s, "job-1/0", since);
    expect(first.outcome).toBe("applied");
    expect(first.detail).toEqual({ channel: ops, ts: expect.stringMatching(/^\d+\.\d{6}$/) });
    expect(await k.probe(s, "job-1/0", { since })).toEqual({
      status: "present",
      detail: first.detail,
    });
    expect(await k.apply(s, "job-1/0", { since })).toEqual(first.detail);
    const messages = sl.messages(ops);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      text: "Deploy 42 finished.",
      metadata: { event_type: "idem_effect", event_payload: { key: "job-1/0" } },
    });
    expect(sl.posts()).toBe(1);
  });

  it("posts no second message after a crash between the post and its record", async () => {
    const { sl, k, ops } = await setUp();
    const s = k.check(spec());
    const since = Date.now();
    sl.dropAfterPost();
    expectIdemError(await rejection(interpret(k, s, "job-1/0", since)), "UNAVAILABLE");
    expect(sl.posts()).toBe(1);
    expect((await interpret(k, s, "job-1/0", since)).outcome).toBe("present");
    expect(sl.messages(ops)).toHaveLength(1);
    expect(sl.posts()).toBe(1);
  });

  it("finds its message past the first page of history, following the cursor", async () => {
    const { sl, k, ops } = await setUp();
    const s = k.check(spec());
    const since = Date.now();
    await interpret(k, s, "job-1/0", since);
    for (let i = 0; i < 250; i++) sl.addMessage(ops, { text: `chatter ${i}`, at: since + 60_000 });
    const before = sl.requests().length;
    expect((await k.probe(s, "job-1/0", { since })).status).toBe("present");
    expect(histories(sl, before)).toHaveLength(2);
  });

  it("reads one page however long the channel's older history is", async () => {
    const { sl, k, ops } = await setUp();
    const since = Date.now();
    for (let i = 0; i < 500; i++)
      sl.addMessage(ops, {
        text: `old ${i}`,
        at: since - 86_400_000 + i,
        bot: true,
        metadata: { event_type: "idem_effect", event_payload: { key: "job-1/0" } },
      });
    const before = sl.requests().length;
    expect((await k.probe(k.check(spec()), "job-1/0", { since })).status).toBe("absent");
    expect(histories(sl, before)).toHaveLength(1);
  });

  it("does not count another poster's message that carries the key", async () => {
    const { sl, k, ops } = await setUp();
    const since = Date.now();
    sl.addMessage(ops, {
      text: "copied",
      user: "U0SOMEONE",
      metadata: { event_type: "idem_effect", event_payload: { key: "job-1/0" } },
    });
    expect((await k.probe(k.check(spec()), "job-1/0", { since })).status).toBe("absent");
  });

  it("past rateLimitWaitMs, fails on `ratelimited` (HTTP 429) with its Retry-After: transient", async () => {
    const { sl, k } = await setUp({ options: { rateLimitWaitMs: 0 } });
    const since = Date.now();
    sl.rateLimit({ retryAfterSeconds: 5, match: (c) => c.method === "chat.postMessage" });
    const e = await rejection(interpret(k, k.check(spec()), "job-1/0", since));
    expectIdemError(e, "UNAVAILABLE", { min: 5000, max: 5000 });
    expect(sl.posts()).toBe(0);
    expect((await interpret(k, k.check(spec()), "job-1/0", since)).outcome).toBe("applied");
  });

  it("does not retry what only the config can mend: the bot not in the channel, a bad token", async () => {
    for (const [o, error] of [
      [{ member: false }, "not_in_channel"],
      [{ token: "xoxb-wrong-token-value" }, "invalid_auth"],
    ] as const) {
      const { sl, k } = await setUp(o);
      const e = await rejection(interpret(k, k.check(spec()), "job-1/0", Date.now()));
      expectIdemError(e, "INVALID_CONFIG");
      expect((e as { details?: { error?: string } }).details?.error).toBe(error);
      expect((e as Error).message).not.toContain("wrong-token");
      expect(sl.violations().every((v) => v.error === error)).toBe(true);
      provoked = true;
      await opened?.close();
      await sl.stop();
    }
    sl = undefined;
    opened = undefined;
  });

  it("maps the other ok:false codes: archived is a conflict, an unknown code transient", async () => {
    const { sl, k } = await setUp();
    sl.failNext({ error: "is_archived", match: (c) => c.method === "chat.postMessage" });
    const since = Date.now();
    expectIdemError(
      await rejection(interpret(k, k.check(spec()), "job-1/0", since)),
      "TARGET_CONFLICT",
    );
    sl.failNext({ error: "fatal_error", match: (c) => c.method === "chat.postMessage" });
    expectIdemError(
      await rejection(interpret(k, k.check(spec()), "job-1/0", since)),
      "UNAVAILABLE",
    );
    sl.failNext({ error: "msg_too_long", match: (c) => c.method === "chat.postMessage" });
    const e = await rejection(interpret(k, k.check(spec()), "job-1/0", since));
    expectIdemError(e, "INVALID_INPUT");
    expect(fieldOf(e)).toBe("text");
    expect(sl.posts()).toBe(0);
  });

  it("refuses a channel the options do not name, and empty or too long text", async () => {
    const { k } = await setUp();
    for (const [bad, field] of [
      [{ ...spec(), channel: "general" }, "channel"],
      [{ ...spec(), channel: "constructor" }, "channel"],
      [spec(""), "text"],
      [spec("x".repeat(40_001)), "text"],
    ] as const) {
      let e: unknown;
      try {
        k.check(bad);
      } catch (err) {
        e = err;
      }
      expectIdemError(e, "INVALID_INPUT");
      expect(fieldOf(e)).toBe(field);
    }
  });

  it("scans the keys this bot marked in the channel, a duplicate listed twice", async () => {
    const { sl, k, ops } = await setUp();
    const since = Date.now();
    const first = await interpret(k, k.check(spec()), "job-1/0", since);
    const dup = sl.addMessage(ops, {
      text: "again",
      bot: true,
      metadata: { event_type: "idem_effect", event_payload: { key: "job-1/0" } },
    });
    await interpret(k, k.check(spec("other")), "job-2/0", since);
    const keys = await k.scan(k.check(spec()));
    expect(Object.fromEntries(keys ?? [])).toEqual({
      "job-1/0": [dup, first.detail.ts],
      "job-2/0": [expect.any(String)],
    });
  });
});
