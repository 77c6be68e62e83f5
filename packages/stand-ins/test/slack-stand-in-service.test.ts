// The Slack stand-in as the real service behaves where clients get it wrong: rate tiers per app
// type (a non-Marketplace app's history once a minute, 15 a page), chat.postMessage's one a second
// per channel, token rotation, and history's read-after-write lag (packages/testing/README.md).
import { afterEach, describe, expect, it } from "vitest";
import {
  type SlackStandIn,
  type StartSlackStandInOptions,
  startSlackStandIn,
} from "../src/index.js";

const T0 = Date.parse("2026-01-05T10:00:00.000Z");
let clock = T0;
let slack: SlackStandIn | undefined;

type Answer = Record<string, unknown> & { ok: boolean; error?: string };

async function start(o: StartSlackStandInOptions = {}) {
  clock = T0;
  slack = await startSlackStandIn({ now: () => clock, ...o });
  return { s: slack, channel: slack.createChannel({ name: "ops" }) };
}

async function call(method: string, args: Record<string, unknown>, token?: string) {
  const s = slack as SlackStandIn;
  const res = await fetch(`${s.url}/api/${method}`, {
    method: "POST",
    headers: {
      ...(token === "" ? {} : { authorization: `Bearer ${token ?? s.token}` }),
      "content-type": "application/json; charset=utf-8",
    },
    body: JSON.stringify(args),
  });
  return { res, body: (await res.json()) as Answer };
}

afterEach(async () => {
  await slack?.stop();
  slack = undefined;
});

describe("Slack stand-in: rate tiers", () => {
  it("gives a non-Marketplace app conversations.history once a minute, 15 messages a page", async () => {
    const { s, channel } = await start({ distribution: "non-marketplace" });
    for (let i = 0; i < 40; i++) s.addMessage(channel, { text: `m${i}`, at: T0 - 60_000 + i });
    const first = await call("conversations.history", { channel, limit: 200 });
    expect(first.body.ok).toBe(true);
    expect(first.body.messages).toHaveLength(15);
    expect(first.body.has_more).toBe(true);
    const second = await call("conversations.history", { channel });
    expect(second.res.status).toBe(429);
    expect(Number(second.res.headers.get("retry-after"))).toBe(60);
    clock += 60_000;
    expect((await call("conversations.history", { channel })).body.ok).toBe(true);
    expect(s.tierRateLimitRefusals()).toBe(1);
    s.assertNoViolations();
  });

  it("gives an internal app Tier 3: 50 history calls a minute", async () => {
    const { s, channel } = await start();
    for (let i = 0; i < 50; i++)
      expect((await call("conversations.history", { channel })).res.status).toBe(200);
    expect((await call("conversations.history", { channel })).res.status).toBe(429);
    s.assertNoViolations();
  });

  it("limits chat.postMessage to about one a second per channel, with a short burst", async () => {
    const { s, channel } = await start();
    const other = s.createChannel({ name: "other" });
    for (let i = 0; i < 10; i++)
      expect((await call("chat.postMessage", { channel, text: `t${i}` })).body.ok).toBe(true);
    expect((await call("chat.postMessage", { channel, text: "more" })).res.status).toBe(429);
    expect((await call("chat.postMessage", { channel: other, text: "here" })).body.ok).toBe(true);
    clock += 1000;
    expect((await call("chat.postMessage", { channel, text: "later" })).body.ok).toBe(true);
    s.assertNoViolations();
  });
});

describe("Slack stand-in: token rotation", () => {
  it("expires an access token after 12 hours; a refresh gives a new pair and revokes the old refresh token", async () => {
    const { s, channel } = await start({ rotation: true });
    const r = s.rotation;
    if (!r) throw new Error("rotation is on");
    expect(s.token).toMatch(/^xoxe\.xoxb-/);
    expect((await call("auth.test", {})).body.ok).toBe(true);
    clock += 12 * 3_600_000;
    expect((await call("auth.test", {})).body.error).toBe("token_expired");
    expect(s.expiredTokenRefusals()).toBe(1);
    const refresh = {
      client_id: r.clientId,
      client_secret: r.clientSecret,
      grant_type: "refresh_token",
      refresh_token: r.refreshToken,
    };
    const fresh = await call("oauth.v2.access", refresh, "");
    expect(fresh.body).toMatchObject({ ok: true, expires_in: 43_200, token_type: "bot" });
    const token = String(fresh.body.access_token);
    expect((await call("chat.postMessage", { channel, text: "hi" }, token)).body.ok).toBe(true);
    expect(s.refreshes()).toBe(1);
    // The refresh token used is revoked: using it again is the client's mistake.
    expect((await call("oauth.v2.access", refresh, "")).body.error).toBe("invalid_refresh_token");
    expect(s.violations().map((v) => v.error)).toEqual(["invalid_refresh_token"]);
  });
});

describe("Slack stand-in: history's lag", () => {
  it("shows a post in conversations.history only historyLagMs later", async () => {
    const { s, channel } = await start({ historyLagMs: 2000 });
    expect((await call("chat.postMessage", { channel, text: "hi" })).body.ok).toBe(true);
    expect((await call("conversations.history", { channel })).body.messages).toEqual([]);
    clock += 2000;
    expect((await call("conversations.history", { channel })).body.messages).toHaveLength(1);
    s.assertNoViolations();
  });
});
