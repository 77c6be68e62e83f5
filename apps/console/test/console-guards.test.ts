// The console's guards without a browser: the Host of a DNS-rebound page, cross-site POSTs, the
// sign-in's way back, read-only; and the activity chart's per-minute figures from the journal.
import { dirname, join } from "node:path";
import { openEffects } from "@idem/core";
import { ManualClock, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { ActivityHistory } from "../src/activity.js";
import { safeNext } from "../src/auth.js";
import { createConsole } from "../src/index.js";

async function withConsole(
  options: { token?: string | null; readOnly?: boolean },
  fn: (
    request: (
      path: string,
      init?: { method?: string; headers?: Record<string, string>; body?: string },
    ) => Promise<Response>,
  ) => Promise<void>,
) {
  await using t = await tempJournal();
  const parsed = parseConfig(
    { journal: { path: t.path } },
    { dir: dirname(t.path), file: join(dirname(t.path), "idem.config.json") },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const effects = openEffects(parsed.config);
  const c = createConsole({
    config: parsed.config,
    journal: t.journal,
    effects,
    actor: "guard-test",
    ...(options.token !== undefined && { token: options.token }),
    ...(options.readOnly !== undefined && { readOnly: options.readOnly }),
  });
  try {
    await fn(async (path, init = {}) =>
      c.app.request(`http://127.0.0.1:7071${path}`, {
        method: init.method ?? "GET",
        headers: { host: "127.0.0.1:7071", ...init.headers },
        ...(init.body !== undefined && { body: init.body }),
      }),
    );
  } finally {
    c.close();
    await effects.close();
  }
}

const FORM = { "content-type": "application/x-www-form-urlencoded" };

describe("console guards", () => {
  it("answers only loopback Host names without a token (a DNS-rebound page gets 421)", async () => {
    await withConsole({}, async (request) => {
      expect((await request("/")).status).toBe(200);
      expect((await request("/", { headers: { host: "localhost:7071" } })).status).toBe(200);
      expect((await request("/", { headers: { host: "evil.example:7071" } })).status).toBe(421);
    });
  });

  it("refuses cross-site POSTs: another Origin, Sec-Fetch-Site cross-site, no CSRF token", async () => {
    await withConsole({}, async (request) => {
      const html = await (await request("/replay")).text();
      expect(html).not.toContain('name="csrf"'); // no selection yet: no form to confirm
      const dl = await (await request("/dead-letters")).text();
      expect(dl).toContain("No dead run.");
      const body = new URLSearchParams({ job: "x", actor: "a" }).toString();
      const post = (headers: Record<string, string>) =>
        request("/dead-letters/retry", { method: "POST", headers: { ...FORM, ...headers }, body });
      const cross = await post({ origin: "https://evil.example" });
      expect(cross.status).toBe(403);
      expect(await cross.text()).toContain("cross-site");
      expect((await post({ "sec-fetch-site": "cross-site" })).status).toBe(403);
      expect((await post({ origin: "null" })).status).toBe(403);
      const noToken = await post({ origin: "http://127.0.0.1:7071" });
      expect(noToken.status).toBe(403);
      expect(await noToken.text()).toContain("CSRF");
    });
  });

  it("with a token: a bearer script may POST without a form token, a wrong bearer may not", async () => {
    await withConsole({ token: "t0ken" }, async (request) => {
      const body = new URLSearchParams({ job: "nope", actor: "script" }).toString();
      const ok = await request("/dead-letters/retry", {
        method: "POST",
        headers: { ...FORM, authorization: "Bearer t0ken", accept: "application/json" },
        body,
      });
      expect(ok.status).toBe(404); // reached core: no such job
      expect(await ok.text()).toContain("no output and no dead letter for job nope");
      const wrong = await request("/dead-letters/retry", {
        method: "POST",
        headers: { ...FORM, authorization: "Bearer nope" },
        body,
      });
      expect(wrong.status).toBe(401);
      // With a token the Host may be a proxy's public name.
      expect(
        (
          await request("/", {
            headers: { host: "console.example", authorization: "Bearer t0ken" },
          })
        ).status,
      ).toBe(200);
    });
  });

  it("read-only refuses every action with 403 and says so, whatever the request carries", async () => {
    await withConsole({ token: "t0ken", readOnly: true }, async (request) => {
      for (const path of ["/dead-letters/retry", "/dead-letters/resolve", "/replay"]) {
        const r = await request(path, {
          method: "POST",
          headers: { ...FORM, authorization: "Bearer t0ken" },
          body: "job=x&actor=y&reason=z&decision=skipped&all=on",
        });
        expect(r.status, path).toBe(403);
        expect(await r.text()).toContain("read-only");
      }
    });
  });

  it("goes back after sign-in only to a path of the console", () => {
    expect(safeNext("/outputs?agent=a")).toBe("/outputs?agent=a");
    for (const bad of ["//evil.example/", "https://evil.example/", "/\\evil.example", undefined, 3])
      expect(safeNext(bad)).toBe("/");
  });
});

const MINUTE = 60_000;
/** The overview's chart as the console answers it in JSON. */
type Activity = { since: number; until: number; outputs: number[]; applied: number[] };
const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);

describe("the activity chart's figures", () => {
  it("reads the whole window first, then only the last minutes, merged into what it holds", () => {
    const h = new ActivityHistory();
    const t0 = 1_800_000_000_000 - (1_800_000_000_000 % MINUTE);
    const now = t0 + 30_000;
    const first = h.nextSince(now);
    expect(first).toBe(t0 + MINUTE - 3 * 60 * MINUTE);
    const read = (since: number, until: number, per: Record<number, [number, number]>) => {
      const n = (until - since) / MINUTE;
      const at = (i: number) => per[since + i * MINUTE] ?? [0, 0];
      return {
        since,
        until,
        bucketMs: MINUTE,
        outputs: Array.from({ length: n }, (_, i) => at(i)[0]),
        applied: Array.from({ length: n }, (_, i) => at(i)[1]),
      };
    };
    const a = h.merge(read(first, t0 + MINUTE, { [first]: [4, 1], [t0]: [2, 0] }), now);
    expect([a.since, a.until, a.outputs.length]).toEqual([first, t0 + MINUTE, 180]);
    expect([a.outputs[0], a.outputs[179], a.applied[0], sum(a.outputs)]).toEqual([4, 2, 1, 6]);
    // Two minutes later: the next read starts two minutes before the end of the last one.
    const later = now + 2 * MINUTE;
    expect(h.nextSince(later)).toBe(t0 - MINUTE);
    const b = h.merge(
      read(t0 - MINUTE, t0 + 3 * MINUTE, { [t0]: [3, 1], [t0 + 2 * MINUTE]: [5, 5] }),
      later,
    );
    // The window moved by two minutes: the first minute read is gone, t0 was read again.
    expect([b.since, b.until, b.outputs.length]).toEqual([
      first + 2 * MINUTE,
      t0 + 3 * MINUTE,
      180,
    ]);
    expect([sum(b.outputs), sum(b.applied), b.outputs[177], b.outputs[179]]).toEqual([8, 6, 3, 5]);
  });

  it("shows the outputs and applied effects the journal recorded before the console started, then the new ones", async () => {
    const clock = new ManualClock(1_800_000_000_000);
    await using t = await tempJournal({ clock });
    const parsed = parseConfig(
      { journal: { path: t.path } },
      { dir: dirname(t.path), file: join(dirname(t.path), "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const record = (jobId: string) =>
      t.journal.outputs.record(
        { jobId, agent: "writer", effects: [] },
        { source: "cli", targets: [] },
      );
    // Two hours ago and an hour ago, and one applied effect 90 minutes ago.
    clock.advance(-2 * 60 * MINUTE);
    await record("old-1");
    const claim = await t.journal.runs.claim({ owner: "t", leaseMs: 600_000, maxLeaseExpiries: 3 });
    if (!claim) throw new Error("no claim");
    await t.journal.ledger.intend(claim.lease, {
      key: "old-1/0",
      idx: 0,
      kind: "k",
      specHash: "h",
    });
    clock.advance(30 * MINUTE);
    await t.journal.ledger.settle(claim.lease, "old-1/0", "applied");
    clock.advance(30 * MINUTE);
    await record("old-2");
    clock.advance(60 * MINUTE);
    const effects = openEffects(parsed.config);
    const c = createConsole({
      config: parsed.config,
      journal: t.journal,
      effects,
      actor: "guard-test",
      now: () => clock.now(),
    });
    const overview = async () => {
      const r = await c.app.request("http://127.0.0.1:7071/?format=json", {
        headers: { host: "127.0.0.1:7071" },
      });
      return ((await r.json()) as { activity: Activity }).activity;
    };
    try {
      const first = await overview();
      expect([sum(first.outputs), sum(first.applied), first.outputs.length]).toEqual([2, 1, 180]);
      expect(first.outputs[first.outputs.length - 1 - 120]).toBe(1);
      expect(first.applied[first.applied.length - 1 - 90]).toBe(1);
      clock.advance(5 * MINUTE);
      await record("new-1");
      const next = await overview();
      expect([sum(next.outputs), sum(next.applied)]).toEqual([3, 1]);
      expect(next.outputs[next.outputs.length - 1]).toBe(1);
      const html = await (
        await c.app.request("http://127.0.0.1:7071/", { headers: { host: "127.0.0.1:7071" } })
      ).text();
      expect(html).toContain('data-outputs="3" data-applied="1"');
    } finally {
      c.close();
      await effects.close();
    }
  });
});

describe("the overview shared by live polls", () => {
  it("reads status() once for concurrent polls and reuses a recent one, but afresh for a page load", async () => {
    await using t = await tempJournal();
    const parsed = parseConfig(
      { journal: { path: t.path } },
      { dir: dirname(t.path), file: join(dirname(t.path), "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    let calls = 0;
    const counted = Object.create(t.journal, {
      status: {
        value: () => {
          calls += 1;
          return t.journal.status();
        },
      },
    });
    const effects = openEffects(parsed.config);
    const c = createConsole({
      config: parsed.config,
      journal: counted,
      effects,
      actor: "guard-test",
      // A still clock: whatever the machine's speed, the second poll comes "at once".
      now: () => 1_800_000_000_000,
    });
    try {
      const poll = () =>
        c.app.request("http://127.0.0.1:7071/", {
          headers: { host: "127.0.0.1:7071", "x-idem-fragment": "1" },
        });
      const answers = await Promise.all([poll(), poll(), poll(), poll(), poll()]);
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(calls).toBe(1);
      expect((await poll()).status).toBe(200);
      expect(calls).toBe(1);
      const load = await c.app.request("http://127.0.0.1:7071/", {
        headers: { host: "127.0.0.1:7071" },
      });
      expect(load.status).toBe(200);
      expect(calls).toBe(2);
    } finally {
      c.close();
      await effects.close();
    }
  });
});
