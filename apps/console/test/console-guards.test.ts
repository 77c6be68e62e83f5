// The console's guards without a browser: the Host of a DNS-rebound page, cross-site POSTs, the
// sign-in's way back, read-only; and the activity chart's per-minute figures.
import { dirname, join } from "node:path";
import { openTargets } from "@idem/core";
import { parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { ActivitySampler } from "../src/activity.js";
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
  const effects = openTargets(parsed.config);
  const c = createConsole({
    config: parsed.config,
    journal: t.journal,
    effects,
    actor: "guard-test",
    sampleMs: 0,
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

describe("the activity chart's figures", () => {
  it("counts each minute as the difference of the totals read at its two ends", () => {
    const s = new ActivitySampler(1);
    const m = 60_000;
    const t0 = 100 * m;
    const totals = (outputs: number, applied: number) => ({
      outputs,
      effects: { applied } as never,
    });
    s.record(t0 + 10_000, totals(10, 5));
    s.record(t0 + m + 5_000, totals(13, 9));
    s.record(t0 + 2 * m + 1_000, totals(13, 10));
    const series = s.series(t0 + 2 * m + 2_000, 4);
    // Minutes t0-1, t0 (first reading inside it: nothing before it is known), t0+1, t0+2.
    expect(series.outputs).toEqual([null, 0, 3, 0]);
    expect(series.applied).toEqual([null, 0, 4, 1]);
    expect(series.since).toBe(t0 + 10_000);
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
    const effects = openTargets(parsed.config);
    const c = createConsole({
      config: parsed.config,
      journal: counted,
      effects,
      actor: "guard-test",
      sampleMs: 0,
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
