// slack.message against Slack as it really behaves (the stand-in's models, each cited in
// packages/testing/README.md): a non-Marketplace app's history tier (one call a minute, 15
// messages a page), token rotation, a rotated secret, history's read-after-write lag, and
// broadcasts refused unless the channel allows them. Each ended dead, or in a duplicate, before.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type OpenedKind, openKind } from "@idem/kit";
import {
  type SlackStandIn,
  type StartSlackStandInOptions,
  skippingClock,
  startSlackStandIn,
  tempDir,
} from "@idem/testing";
import { afterEach, describe, expect, it } from "vitest";
import { slackMessageKind } from "../../src/kinds/slack-message/slack-message-kind.js";
import { expectIdemError, fieldOf, interpret, rejection } from "./kind-calls.js";

const TOKEN_ENV = "IDEM_TEST_SLACK_TOKEN";
const spec = (text = "Deploy 42 finished.") => ({ kind: "slack.message", channel: "ops", text });

let sl: SlackStandIn | undefined;
const opened: OpenedKind[] = [];
afterEach(async () => {
  sl?.assertNoViolations();
  for (const k of opened.splice(0)) await k.close();
  await sl?.stop();
  sl = undefined;
});

async function setUp(o: StartSlackStandInOptions = {}) {
  const clock = skippingClock();
  const s = await startSlackStandIn({ now: () => clock.now(), ...o });
  sl = s;
  const ops = s.createChannel({ name: "ops" });
  const env: Record<string, string | undefined> = { [TOKEN_ENV]: s.token };
  const open = (options: Record<string, unknown> = {}) => {
    const k = openKind(slackMessageKind, {
      options: { baseUrl: s.url, tokenEnv: TOKEN_ENV, channels: { ops }, ...options },
      env,
      clock,
    });
    opened.push(k);
    return k;
  };
  return { sl: s, ops, clock, env, open };
}

describe("slack.message on a non-Marketplace app's history tier (1 a minute, 15 a page)", () => {
  it("ends applied once with 40 messages in the probe window, waiting out the tier", async () => {
    const { sl, ops, clock, open } = await setUp({ distribution: "non-marketplace" });
    const since = clock.now();
    for (let i = 0; i < 40; i++) sl.addMessage(ops, { text: `chatter ${i}`, at: since + i });
    const k = open({ historyPageSize: 15 });
    clock.advance(1000);
    expect((await interpret(k, k.check(spec()), "job-1/0", since)).outcome).toBe("applied");
    expect(sl.messages(ops).filter((m) => m.botId)).toHaveLength(1);
    // Three pages, two of them after Slack said to wait a minute.
    expect(sl.tierRateLimitRefusals()).toBe(2);
  });

  it("never livelocks when each attempt may read one page: it goes on where the last one stopped", async () => {
    const { sl, ops, clock, open } = await setUp({ distribution: "non-marketplace" });
    const since = clock.now();
    for (let i = 0; i < 40; i++) sl.addMessage(ops, { text: `chatter ${i}`, at: since + i });
    const k = open({ rateLimitWaitMs: 0 });
    clock.advance(1000);
    let attempts = 0;
    for (;;) {
      attempts++;
      try {
        expect((await interpret(k, k.check(spec()), "job-1/0", since)).outcome).toBe("applied");
        break;
      } catch (e) {
        expectIdemError(e, "UNAVAILABLE", { min: 1000, max: 60_000 });
        clock.advance((e as { details: { retryAfterMs: number } }).details.retryAfterMs);
      }
      expect(attempts).toBeLessThan(5);
    }
    // Three pages of the window, then what was posted since the probe first looked.
    expect(attempts).toBe(4);
    expect(sl.messages(ops).filter((m) => m.botId)).toHaveLength(1);
    // Each page read once: the pages below the first are asked by `latest`, never page 1 again.
    const pages = sl.requests().filter((r) => r.method === "conversations.history" && r.ok);
    expect(pages).toHaveLength(4);
  });
});

describe("slack.message's token", () => {
  it("with token rotation: refreshes the token before it expires, and again when Slack revokes it", async () => {
    const { sl, ops, clock, env, open } = await setUp({ rotation: true });
    await using dir = await tempDir("idem-slack-rotation-");
    const r = sl.rotation;
    if (!r) throw new Error("rotation is on");
    Object.assign(env, {
      SLACK_ID: r.clientId,
      SLACK_SECRET: r.clientSecret,
      SLACK_RT: r.refreshToken,
    });
    const rotation = {
      clientIdEnv: "SLACK_ID",
      clientSecretEnv: "SLACK_SECRET",
      refreshTokenEnv: "SLACK_RT",
      stateFile: join(dir.path, "slack-token.json"),
    };
    const k = open({ rotation });
    expect((await interpret(k, k.check(spec("a")), "job-1/0", clock.now())).outcome).toBe(
      "applied",
    );
    expect(statSync(rotation.stateFile).mode & 0o777).toBe(0o600);
    // Eleven hours on, the 12-hour token is refreshed before it runs out: Slack never refuses it.
    clock.advance(11 * 3_600_000);
    expect((await interpret(k, k.check(spec("b")), "job-2/0", clock.now())).outcome).toBe(
      "applied",
    );
    const refreshed = sl.refreshes();
    expect(refreshed).toBeGreaterThanOrEqual(1);
    expect(sl.expiredTokenRefusals()).toBe(0);
    // A second process of the same config takes the current pair from the state file.
    const other = open({ rotation });
    expect((await interpret(other, other.check(spec("c")), "job-3/0", clock.now())).outcome).toBe(
      "applied",
    );
    expect(sl.refreshes()).toBe(refreshed);
    // Slack revokes the current token early: refused once, refreshed, and the post goes out.
    const state = JSON.parse(readFileSync(rotation.stateFile, "utf8")) as { accessToken: string };
    sl.revokeToken(state.accessToken);
    expect((await interpret(k, k.check(spec("d")), "job-4/0", clock.now())).outcome).toBe(
      "applied",
    );
    expect(sl.refreshes()).toBe(refreshed + 1);
    expect(sl.messages(ops).filter((m) => m.botId)).toHaveLength(4);
  });

  it("reads the token's variable again when Slack refuses the token (a rotated secret)", async () => {
    const { sl, clock, env, open } = await setUp();
    const k = open();
    expect((await interpret(k, k.check(spec("a")), "job-1/0", clock.now())).outcome).toBe(
      "applied",
    );
    sl.revokeToken(env[TOKEN_ENV] as string);
    env[TOKEN_ENV] = sl.addToken();
    expect((await interpret(k, k.check(spec("b")), "job-2/0", clock.now())).outcome).toBe(
      "applied",
    );
    expect(sl.expiredTokenRefusals()).toBe(1);
  });
});

describe("slack.message against history's lag", () => {
  it("waits for history to show a post whose answer was lost: one message", async () => {
    const { sl, ops, clock, open } = await setUp({ historyLagMs: 3000 });
    const k = open();
    const since = clock.now();
    sl.dropAfterPost();
    expectIdemError(
      await rejection(interpret(k, k.check(spec()), "job-1/0", since)),
      "UNAVAILABLE",
    );
    expect((await interpret(k, k.check(spec()), "job-1/0", since)).outcome).toBe("present");
    expect(sl.messages(ops)).toHaveLength(1);
  });
});

describe("slack.message's broadcasts", () => {
  it("refuses <!channel>, <!here> and <!everyone> before record, unless the channel allows them", async () => {
    const { ops, open } = await setUp();
    const k = open();
    for (const text of ["<!channel> deploy done", "hey <!here|here>", "<!EVERYONE>"]) {
      const e = await rejection(Promise.resolve().then(() => k.check(spec(text))));
      expectIdemError(e, "INVALID_INPUT");
      expect(fieldOf(e)).toBe("text");
    }
    expect(() => k.check(spec("a <#C0123ABCD> link and <@U0123> are fine"))).not.toThrow();
    const allowing = open({ channels: { ops: { id: ops, broadcast: true } } });
    expect(() => allowing.check(spec("<!here> deploy done"))).not.toThrow();
  });
});
