// The console over a PostgreSQL journal (a disposable server): its pages read through @idem/core
// and the JournalStore port only, so they answer what the store answers; a replay confirmed on
// the page records its lineage there.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildReplayPlan, openEffects, replayPlanJson, showJob } from "@idem/core";
import { effectTargetsOf } from "@idem/effects";
import { type JournalStore, openJournalStore } from "@idem/journal";
import { type AgentOutput, type Config, parseConfig } from "@idem/schema";
import { type PostgresHandle, postgresBinDir, startPostgres, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipUnless } from "../../../test/support/skip.js";
import { type Console, createConsole } from "../src/index.js";

const HAS_PG = postgresBinDir() !== undefined;

const WITH_PG = skipUnless(
  HAS_PG,
  "no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql)",
);

describe("the console on PostgreSQL", WITH_PG, () => {
  let pg: PostgresHandle;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let journal: JournalStore;
  let config: Config;
  let effects: ReturnType<typeof openEffects>;
  let console_: Console;

  beforeAll(async () => {
    pg = await startPostgres();
    dir = await tempDir();
    const url = await pg.createDatabase("console_views");
    mkdirSync(join(dir.path, "outbox"));
    const parsed = parseConfig(
      { journal: { url }, roots: { outbox: { path: "outbox" } } },
      { dir: dir.path, file: join(dir.path, "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    config = parsed.config;
    journal = await openJournalStore({ url });
    effects = openEffects(config);
    for (let i = 0; i < 3; i++) {
      const output: AgentOutput = {
        jobId: `pg-${i}`,
        agent: i === 2 ? "reviewer" : "writer",
        summary: `note ${i}`,
        effects: [{ kind: "file.write", root: "outbox", path: `n${i}.txt`, content: `${i}\n` }],
      };
      await journal.outputs.record(output, {
        source: "cli",
        targets: effectTargetsOf(output, config),
      });
    }
    console_ = createConsole({ config, journal, effects, actor: "pg-test" });
  });

  afterAll(async () => {
    console_?.close();
    await effects?.close();
    await journal?.close();
    await pg?.stop();
    await dir?.[Symbol.asyncDispose]?.();
  });

  const req = (path: string, init?: RequestInit) =>
    console_.app.request(`http://127.0.0.1:7071${path}`, {
      ...init,
      headers: { host: "127.0.0.1:7071", ...(init?.headers as Record<string, string>) },
    });

  it("shows the counts of status() on the overview, and the chart's minutes from the journal", async () => {
    const r = await req("/?format=json");
    expect(r.status).toBe(200);
    const overview = (await r.json()) as { status: unknown; activity: { outputs: number[] } };
    expect(overview.status).toEqual(await journal.status());
    // The chart's minutes from the journal's own history (activity() on PostgreSQL).
    expect(overview.activity.outputs.reduce((a, n) => a + n, 0)).toBe(3);
    const html = await (await req("/")).text();
    expect(html).toContain('data-k="outputs">3<');
    expect(html).toContain('data-outputs="3"');
    expect(html).toContain('data-k="runs.pending">3<');
  });

  it("lists outputs filtered by agent and shows an output with its effect", async () => {
    const page = (await (await req("/outputs?agent=writer&format=json")).json()) as {
      rows: { jobId: string; state: string }[];
    };
    // Newest first, page after page back; `after` reads in recording order.
    expect(page.rows.map((x) => x.jobId)).toEqual(["pg-1", "pg-0"]);
    expect(page.rows.every((x) => x.state === "pending")).toBe(true);
    const paged = (await (await req("/outputs?limit=2&format=json")).json()) as {
      rows: { jobId: string }[];
      nextBeforeSeq: number;
    };
    expect(paged.rows.map((x) => x.jobId)).toEqual(["pg-2", "pg-1"]);
    const next = (await (
      await req(`/outputs?limit=2&before=${paged.nextBeforeSeq}&format=json`)
    ).json()) as {
      rows: { jobId: string }[];
    };
    expect(next.rows.map((x) => x.jobId)).toEqual(["pg-0"]);
    const oldest = (await (await req("/outputs?limit=2&after=0&format=json")).json()) as {
      rows: { jobId: string }[];
    };
    expect(oldest.rows.map((x) => x.jobId)).toEqual(["pg-0", "pg-1"]);
    const html = await (await req("/outputs/pg-1")).text();
    expect(html).toContain("note 1");
    expect(html).toContain("output.recorded");
    expect((await req("/outputs/nope")).status).toBe(404);
  });

  it("plans a replay as buildReplayPlan does and records its lineage when confirmed", async () => {
    // Two runs done (as an interpreter leaves them, without effects written: the files are absent).
    for (let i = 0; i < 2; i++) {
      const c = await journal.runs.claim({
        owner: "pg-test",
        leaseMs: 60_000,
        maxLeaseExpiries: 5,
      });
      if (!c) throw new Error("nothing to claim");
      await journal.runs.complete(c.lease);
    }
    const page = (await (await req("/replay?jobs=pg-0+pg-1+pg-2&format=json")).json()) as {
      plan: unknown[];
      summary: unknown;
      busy: string[];
    };
    const direct = await buildReplayPlan({
      journal,
      effects,
      selection: { jobIds: ["pg-0", "pg-1", "pg-2"] },
      forceUnprobeable: false,
    });
    expect(page.plan).toEqual(direct.plan);
    expect(page.summary).toEqual(direct.summary);
    expect(page.busy).toEqual(["pg-2"]);
    expect(direct.jobIds).toEqual(["pg-0", "pg-1"]);

    // By effect: a filter no effect of theirs is in leaves both outputs untouched, as core says.
    const filtered = await (await req("/replay?jobs=pg-0+pg-1&kind=git.commit&format=json")).json();
    const only = { kinds: ["git.commit"] };
    expect(filtered).toEqual(
      replayPlanJson(
        await buildReplayPlan({
          journal,
          effects,
          selection: { jobIds: ["pg-0", "pg-1"] },
          forceUnprobeable: false,
          only,
        }),
      ),
    );
    expect((filtered as { untouched: string[] }).untouched).toEqual(["pg-0", "pg-1"]);
    const unknown = await req("/replay?jobs=pg-0&root=nope&format=json");
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('root \\"nope\\": no such root');

    const formPage = await req("/replay?jobs=pg-0+pg-1");
    // The page's CSRF token is its session's: the form goes back with the session's cookie.
    const cookie = (formPage.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const form = await formPage.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(form)?.[1] ?? "";
    expect(csrf).not.toBe("");
    expect(cookie).toMatch(/^idem_console_session=/);
    const post = (fields: Record<string, string> | [string, string][]) =>
      req("/replay", {
        method: "POST",
        headers: {
          cookie,
          origin: "http://127.0.0.1:7071",
          "sec-fetch-site": "same-origin",
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams(fields).toString(),
      });
    const noReason = await post({ jobs: "pg-0 pg-1", actor: "pg-test", csrf });
    expect(noReason.status).toBe(400);
    expect(await noReason.text()).toContain("reason is required");
    expect((await journal.runs.latest("pg-0"))?.generation).toBe(1);

    // A repeated field (two kinds ticked) reaches the filter whole.
    const done = await post([
      ["jobs", "pg-0 pg-1"],
      ["actor", "pg-test"],
      ["csrf", csrf],
      ["reason", "outbox wiped"],
      ["kind", "file.write"],
      ["kind", "git.commit"],
    ]);
    expect(done.status).toBe(303);
    const progressUrl = done.headers.get("location") ?? "";
    expect(progressUrl).toMatch(/^\/replay\/runs\//);
    const run = await journal.runs.latest("pg-0");
    expect(run?.generation).toBe(2);
    expect(run?.replay).toMatchObject({
      actor: "pg-test",
      reason: "outbox wiped",
      replaysGeneration: 1,
      only: { kinds: ["file.write", "git.commit"] },
    });
    const progress = (await (await req(`${progressUrl}?format=json`)).json()) as {
      total: number;
      remaining: number;
    };
    expect(progress).toMatchObject({ total: 2, remaining: 2 });
    const html = await (await req("/outputs/pg-0")).text();
    expect(html).toContain("outbox wiped");
    expect(html).toContain("replays generation 1, by <b>pg-test</b>");
    // The page's view (its reads made at once) is the one `idem show --json` prints.
    const shown = await (await req("/outputs/pg-0?format=json")).json();
    expect(shown).toEqual(JSON.parse(JSON.stringify(await showJob(journal, "pg-0"))));
    expect((shown as { lineage: unknown[] }).lineage).toHaveLength(1);
  });
});
