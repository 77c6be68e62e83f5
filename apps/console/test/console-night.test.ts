// The console at 3 a.m. (issue 36): a file an effect wrote is deleted by hand; the output's page
// says its state is what the ledger last saw, the audit finds the drift and links to a replay's
// dry run of that job, the overview's alerts say so, the replay's progress names each effect's
// state; the overview shows the jobs under a lease; /favicon.ico answers; times are ISO UTC.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { kindsOf, openEffects } from "@idem/core";
import { effectTargetsOf } from "@idem/effects";
import { createInterpreter } from "@idem/interpreter";
import { silentLogger } from "@idem/runtime";
import { type AgentOutput, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createConsole } from "../src/index.js";

const ORIGIN = "http://127.0.0.1:7071";

describe("the console at 3 a.m.", () => {
  it("leads from a file deleted by hand to a replay that puts it back, saying what it knows and when", async () => {
    await using t = await tempJournal();
    const dir = join(t.dir, "ws");
    mkdirSync(join(dir, "outbox"), { recursive: true });
    const parsed = parseConfig(
      { journal: { path: t.path }, roots: { outbox: { path: "outbox" } } },
      { dir, file: join(dir, "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const config = parsed.config;
    const effects = openEffects(config, { kinds: kindsOf(config, { durable: false }) });
    // Without the background audit: this is the path of a person who asks for one.
    const c = createConsole({
      config,
      journal: t.journal,
      effects,
      actor: "night (console)",
      auditIntervalMs: null,
    });
    // One browser: the session cookie the console hands out comes back with every request (its
    // forms' CSRF token is that session's).
    let cookie = "";
    const request = async (path: string, init: { method?: string; body?: string } = {}) => {
      const res = await c.app.request(`${ORIGIN}${path}`, {
        method: init.method ?? "GET",
        headers: {
          host: "127.0.0.1:7071",
          origin: ORIGIN,
          ...(cookie !== "" && { cookie }),
          ...(init.body !== undefined && { "content-type": "application/x-www-form-urlencoded" }),
        },
        ...(init.body !== undefined && { body: init.body }),
      });
      const set = res.headers.get("set-cookie");
      if (set) cookie = set.split(";")[0] ?? "";
      return res;
    };
    const interpret = () =>
      createInterpreter({ config, journal: t.journal, effects, logger: silentLogger() }).drain();
    try {
      const icon = await request("/favicon.ico");
      expect(icon.status).toBe(200);
      expect(icon.headers.get("content-type")).toContain("image/svg+xml");
      const js = await (await request("/assets/console.js")).text();
      expect(js).toContain("toISOString");
      expect(js).not.toContain("toLocaleTimeString");

      const output: AgentOutput = {
        jobId: "night-1",
        agent: "writer",
        effects: [{ kind: "file.write", root: "outbox", path: "n.txt", content: "hi\n" }],
      };
      await t.journal.outputs.record(output, {
        source: "api",
        targets: effectTargetsOf(output, config),
      });
      await interpret();
      const file = join(dir, "outbox/n.txt");
      expect(existsSync(file)).toBe(true);
      rmSync(file); // by hand, at 3 a.m.

      const before = await (await request("/")).text();
      expect(before).toContain("No background audit");
      const outputPage = await (await request("/outputs/night-1")).text();
      expect(outputPage).toContain("state (as the ledger last saw it)");
      expect(outputPage).toContain('data-testid="ledger-note"');
      expect(outputPage).toMatch(/<a href="\/audit">run an audit<\/a>/);

      const audit = await (await request("/audit")).text();
      expect(audit).toContain("Not clean");
      const link = /data-testid="drift-replay">[^<]*<a href="([^"]+)"/.exec(audit)?.[1];
      expect(link).toBe("/replay?jobs=night-1");
      const overview = await (await request("/")).text();
      expect(overview).toMatch(
        /data-alert="drift"[^>]*>The audit of .* found 1 effect\(s\) drifted/,
      );
      expect(overview).toContain('href="/replay?jobs=night-1"');

      const plan = await (await request(link as string)).text();
      expect(plan).toContain("Plan (dry run: nothing changed)");
      expect(plan).toMatch(/data-key="night-1\/0" data-action="apply"/);
      const csrf = /name="csrf" value="([^"]+)"/.exec(plan)?.[1] ?? "";
      const created = await request("/replay", {
        method: "POST",
        body: new URLSearchParams({
          csrf,
          jobs: "night-1",
          reason: "outbox/n.txt deleted by hand",
          actor: "night (console)",
        }).toString(),
      });
      expect(created.status).toBe(303);
      await interpret();
      expect(existsSync(file)).toBe(true);
      const progress = await (await request(created.headers.get("location") as string)).text();
      expect(progress).toMatch(
        /data-effect="night-1\/0"><code>night-1\/0<\/code> <span class="badge s-applied">/,
      );
      expect(progress).toMatch(/data-k="effects.applied">1</);
      expect(progress).toContain("effects 1 applied");

      await t.journal.jobs.enqueue({ jobId: "held-1", agent: "writer", input: {} });
      await t.journal.jobs.claimNext({ owner: "host-9:4242:abcd", leaseMs: 600_000 });
      const leased = await (await request("/")).text();
      expect(leased).toMatch(/data-leased="held-1">.*host-9:4242:abcd.*<time datetime="[^"]+Z">/s);
    } finally {
      c.close();
      await effects.close();
    }
  });

  it("finds drift by itself (the background audit) and warns when runs wait with no interpreter", async () => {
    await using t = await tempJournal();
    const dir = join(t.dir, "ws");
    mkdirSync(join(dir, "outbox"), { recursive: true });
    const parsed = parseConfig(
      {
        journal: { path: t.path },
        roots: { outbox: { path: "outbox" } },
        console: { auditIntervalMs: 1000 },
        interpreter: { pollMs: 20 },
      },
      { dir, file: join(dir, "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const config = parsed.config;
    const effects = openEffects(config, { kinds: kindsOf(config, { durable: false }) });
    const c = createConsole({ config, journal: t.journal, effects, actor: "night (console)" });
    const overview = async () =>
      (await (
        await c.app.fetch(
          new Request(`${ORIGIN}/?format=json`, { headers: { host: "127.0.0.1:7071" } }),
        )
      ).json()) as {
        audit: { by: string; clean: boolean; drift: number; driftJobs: string[] } | null;
        idleInterpreters: { pending: number; waitedMs: number } | null;
      };
    const until = async (what: string, check: () => Promise<boolean>) => {
      const end = Date.now() + 60_000;
      while (!(await check())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    try {
      const output: AgentOutput = {
        jobId: "night-2",
        agent: "writer",
        effects: [{ kind: "file.write", root: "outbox", path: "m.txt", content: "hi\n" }],
      };
      await t.journal.outputs.record(output, {
        source: "api",
        targets: effectTargetsOf(output, config),
      });
      // A run waits and nothing takes it: the warning comes once it has waited 10 s unserved.
      expect((await overview()).idleInterpreters).toBeNull();
      await until("the no-interpreter warning", async () => {
        const idle = (await overview()).idleInterpreters;
        return idle !== null && idle.pending === 1 && idle.waitedMs >= 10_000;
      });
      const page = await (
        await c.app.fetch(new Request(`${ORIGIN}/`, { headers: { host: "127.0.0.1:7071" } }))
      ).text();
      expect(page).toMatch(/data-alert="no-interpreter"[^>]*>1 run\(s\) have waited \d+ s/);
      await createInterpreter({
        config,
        journal: t.journal,
        effects,
        logger: silentLogger(),
      }).drain();
      expect((await overview()).idleInterpreters).toBeNull();

      // Deleted by hand; nobody opens the audit page: the background audit finds it.
      rmSync(join(dir, "outbox/m.txt"));
      await until("the background audit to find the drift", async () => {
        const a = (await overview()).audit;
        return a !== null && a.by === "background" && a.drift === 1;
      });
      expect((await overview()).audit?.driftJobs).toEqual(["night-2"]);
    } finally {
      c.close();
      await effects.close();
    }
  });
});
