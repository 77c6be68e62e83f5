import { fdatasync } from "node:fs";
import { BUILT_IN_KINDS } from "@idem/effects";
import type { SqliteJournalOptions } from "@idem/journal";
import { silentLogger } from "@idem/runtime";
import { openApiDocument } from "@idem/schema";
import { createOpenApiChecker, startNatsServer, tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import {
  createApiApp,
  createExecutor,
  createExecutorMetrics,
  startApiServer,
} from "../src/index.js";
import { testConfig } from "./helpers.js";

// Every response these tests get is checked against docs/openapi.json's description of its route,
// status and Content-Type (the document is generated from the same zod schemas; packages/schema's
// test keeps the committed copy equal to it): a body, status or header it does not describe fails.
const openapi = createOpenApiChecker(
  openApiDocument({ effects: BUILT_IN_KINDS.map((k) => k.spec) }),
);
const checkedFetch = openapi.fetch;

async function setup(extra: Record<string, unknown> = {}, journal: SqliteJournalOptions = {}) {
  const tj = await tempJournal(journal);
  const config = testConfig({ dir: tj.dir, journalPath: tj.path, extra });
  const api = await startApiServer({
    config,
    journal: tj.journal,
    metrics: createExecutorMetrics(),
    logger: silentLogger(),
    port: 0,
  });
  return {
    tj,
    api,
    async [Symbol.asyncDispose]() {
      await api.close();
      await tj.dispose();
    },
  };
}

const output = (jobId: string, summary = "hello") => ({
  jobId,
  agent: "writer",
  summary,
  effects: [{ kind: "file.write", root: "outbox", path: "a.txt", content: "hi" }],
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  checkedFetch(`${url}/v1/outputs`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

/** The JSON bodies these tests read. */
interface Body {
  status?: string;
  jobId?: string | null;
  issues?: { path: string }[];
  outputs?: number;
  rejections?: number;
  output?: { summary?: string };
}
const json = async (r: Response): Promise<Body> => (await r.json()) as Body;

describe("the submit API over HTTP", () => {
  it("answers 201 recorded, 200 duplicate, 409 conflict and 400 invalid with the issues", async () => {
    await using env = await setup();
    const { url } = env.api;
    const r1 = await post(url, output("h-1"));
    expect(r1.status).toBe(201);
    expect(await json(r1)).toEqual({ status: "recorded", jobId: "h-1" });
    const r2 = await post(url, output("h-1"));
    expect(r2.status).toBe(200);
    expect((await json(r2)).status).toBe("duplicate");
    const r3 = await post(url, output("h-1", "other"));
    expect(r3.status).toBe(409);
    expect((await json(r3)).status).toBe("conflict");
    const r4 = await post(url, {
      ...output("h-2"),
      effects: [{ kind: "file.write", root: "nope", path: "../x", content: "" }],
    });
    expect(r4.status).toBe(400);
    const body4 = await json(r4);
    expect(body4.status).toBe("invalid");
    expect(body4.issues?.map((i: { path: string }) => i.path)).toContain("effects.0.path");
    expect(await env.tj.journal.outputs.has("h-2")).toBe(false);
    const r5 = await post(url, "{not json");
    expect(r5.status).toBe(400);
    const got = await checkedFetch(`${url}/v1/outputs/h-1`);
    expect(got.status).toBe(200);
    expect((await json(got)).output?.summary).toBe("hello");
    expect((await checkedFetch(`${url}/v1/outputs/none`)).status).toBe(404);
    const status = await json(await checkedFetch(`${url}/v1/status`));
    expect(status.outputs).toBe(1);
    expect(status.rejections).toBe(1);
    expect((await checkedFetch(`${url}/healthz`)).status).toBe(200);
    const metrics = await (await checkedFetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/idem_executor_records_total\{source="http",status="recorded"\} 1/);
    expect(metrics).toMatch(/idem_runs\{state="pending"\} 1/);
  });

  it("keeps the traceparent header of a submit with the record, tracing off; a retry under another traceparent is a duplicate keeping the first", async () => {
    await using env = await setup();
    const { url } = env.api;
    const first = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const second = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect((await post(url, output("t-1"), { traceparent: first })).status).toBe(201);
    expect((await post(url, output("t-1"), { traceparent: second })).status).toBe(200);
    const got = await checkedFetch(`${url}/v1/outputs/t-1`);
    expect(((await got.json()) as { traceparent?: string }).traceparent).toBe(first);
    expect((await post(url, output("t-2"), { traceparent: "not-a-trace" })).status).toBe(201);
    expect((await env.tj.journal.outputs.get("t-2"))?.traceparent).toBeUndefined();
  });

  it("answers 401 without the bearer token when one is configured", async () => {
    await using env = await setup({ api: { token: "s3cret" } });
    const { url } = env.api;
    expect((await post(url, output("t-1"))).status).toBe(401);
    expect((await post(url, output("t-1"), { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await checkedFetch(`${url}/v1/status`)).status).toBe(401);
    expect((await post(url, output("t-1"), { authorization: "Bearer s3cret" })).status).toBe(201);
  });

  it("answers 413 over api.maxBodyBytes and records nothing", async () => {
    await using env = await setup({ api: { maxBodyBytes: 1024 } });
    const big = { ...output("b-1"), summary: "x".repeat(2048) };
    const r = await post(env.api.url, big);
    expect(r.status).toBe(413);
    expect(await env.tj.journal.outputs.has("b-1")).toBe(false);
    const job = { jobId: "b-2", agent: "writer", input: "x".repeat(2048) };
    const r2 = await checkedFetch(`${env.api.url}/v1/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(job),
    });
    expect(r2.status).toBe(413);
    expect(await env.tj.journal.jobs.get("b-2")).toBeUndefined();
  });

  it("answers 503 with the failure class when the journal fails, and /healthz 503 once its fsync failed", async () => {
    // An fsync that fails with EIO cannot be caused on this machine's disk: the journal's own
    // injection point stands in for it.
    let failing = false;
    const eio = Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
    await using env = await setup(
      {},
      { fdatasync: (fd, done) => (failing ? setImmediate(() => done(eio)) : fdatasync(fd, done)) },
    );
    const { url } = env.api;
    expect((await post(url, output("f-1"))).status).toBe(201);
    failing = true;
    const failed = await post(url, output("f-2"));
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ error: expect.stringMatching(/EIO/) });
    const job = await checkedFetch(`${url}/v1/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jobId: "f-3", agent: "writer", input: {} }),
    });
    expect(job.status).toBe(503);
    const health = await checkedFetch(`${url}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ ok: false, error: expect.stringMatching(/EIO/) });
    // A journal that cannot be read at all: every read route answers 503, nothing half-done.
    await env.tj.journal.close();
    for (const path of ["/v1/status", "/v1/outputs/f-1", "/metrics"]) {
      const r = await checkedFetch(`${url}${path}`);
      expect(r.status, path).toBe(503);
      expect(await r.json(), path).toMatchObject({ class: "logic" });
    }
  });
});

const postJob = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  checkedFetch(`${url}/v1/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("the enqueue API over HTTP", () => {
  it("answers 201 for a new job, 200 for the same job again and 409 for the job ID with another input, on the embedded queue", async () => {
    await using env = await setup();
    const { url } = env.api;
    const r1 = await postJob(url, { jobId: "q-1", agent: "writer", input: { n: 1 } });
    expect(r1.status).toBe(201);
    expect(await r1.json()).toEqual({ jobId: "q-1", stream: "embedded", seq: 1, duplicate: false });
    const r2 = await postJob(url, { jobId: "q-1", agent: "writer", input: { n: 1 } });
    expect(r2.status).toBe(200);
    expect(await r2.json()).toMatchObject({ jobId: "q-1", stream: "embedded", duplicate: true });
    const r3 = await postJob(url, { jobId: "q-1", agent: "writer", input: { n: 2 } });
    expect(r3.status).toBe(409);
    expect(((await r3.json()) as { error: string }).error).toMatch(/another input/);
    expect((await env.tj.journal.jobs.get("q-1"))?.input).toEqual({ n: 1 });
  });

  it("keeps the traceparent header of an enqueue with the job, tracing off", async () => {
    await using env = await setup();
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const job = { jobId: "q-t", agent: "writer", input: {} };
    expect((await postJob(env.api.url, job, { traceparent })).status).toBe(201);
    expect((await env.tj.journal.jobs.get("q-t"))?.traceparent).toBe(traceparent);
  });

  it("answers 400 naming the field for an invalid job, a batch, or an agent the config does not know, and enqueues nothing", async () => {
    await using env = await setup();
    const { url } = env.api;
    const bad = await postJob(url, { jobId: "no spaces", agent: "writer", input: {} });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { problems: string[] }).problems.join("\n")).toMatch(/^jobId:/m);
    const unknown = await postJob(url, { jobId: "q-2", agent: "nobody", input: {} });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { problems: string[] }).problems.join("\n")).toMatch(
      /agent: .*unknown-agent/,
    );
    const batch = await postJob(url, [{ jobId: "q-3", agent: "writer", input: {} }]);
    expect(batch.status).toBe(400);
    const notJson = await postJob(url, "{");
    expect(notJson.status).toBe(400);
    for (const id of ["q-2", "q-3"]) expect(await env.tj.journal.jobs.get(id)).toBeUndefined();
  });

  it("answers 401 on POST /v1/jobs without the bearer token when one is configured", async () => {
    await using env = await setup({ api: { token: "s3cret" } });
    const job = { jobId: "q-4", agent: "writer", input: {} };
    expect((await postJob(env.api.url, job)).status).toBe(401);
    const ok = await postJob(env.api.url, job, { authorization: "Bearer s3cret" });
    expect(ok.status).toBe(201);
  });

  it("answers 501 with a clear message on JetStream when the server has no publisher", async () => {
    const tj = await tempJournal();
    const config = testConfig({ dir: tj.dir, journalPath: tj.path, natsUrl: "nats://127.0.0.1:1" });
    const api = await startApiServer({
      config,
      journal: tj.journal,
      metrics: createExecutorMetrics(),
      logger: silentLogger(),
      port: 0,
    });
    try {
      const r = await postJob(api.url, { jobId: "q-5", agent: "writer", input: {} });
      expect(r.status).toBe(501);
      expect(((await r.json()) as { error: string }).error).toMatch(/idem enqueue/);
      expect(await tj.journal.jobs.get("q-5")).toBeUndefined();
    } finally {
      await api.close();
      await tj.dispose();
    }
  });
});

describe("the enqueue API on JetStream", () => {
  it("publishes with the executor's publisher: 201 with the stream and its sequence, 200 for the same job again, and the executor records the job's output", async () => {
    await using server = await startNatsServer();
    const tj = await tempJournal();
    const config = testConfig({ dir: tj.dir, journalPath: tj.path, natsUrl: server.url });
    const ex = createExecutor({ config, journal: tj.journal, logger: silentLogger() });
    await ex.start();
    const api = await startApiServer({
      config,
      journal: tj.journal,
      metrics: ex.metrics,
      logger: silentLogger(),
      port: 0,
      ...(ex.publisher ? { publisher: ex.publisher } : {}),
    });
    try {
      const job = { jobId: "js-1", agent: "writer", input: {} };
      const r1 = await postJob(api.url, job);
      expect(r1.status).toBe(201);
      expect(await r1.json()).toMatchObject({
        jobId: "js-1",
        stream: config.nats?.stream,
        duplicate: false,
      });
      const r2 = await postJob(api.url, job);
      expect(r2.status).toBe(200);
      expect(await r2.json()).toMatchObject({ duplicate: true });
      const until = Date.now() + 60_000;
      while (!(await tj.journal.outputs.has("js-1")) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await tj.journal.outputs.has("js-1")).toBe(true);
    } finally {
      await api.close();
      await ex.stop();
      await tj.dispose();
    }
  });
});

describe("the HTTP API and its OpenAPI document", () => {
  it("serves the document at GET /v1/openapi.json without the token, as docs/openapi.json holds it", async () => {
    // Every built-in kind configured (docs/openapi.json describes them all; a running executor
    // describes the kinds its config has).
    await using env = await setup({
      api: { token: "s3cret" },
      github: { repos: { app: { owner: "acme", name: "app" } } },
      slack: { channels: { ops: "C0123456789" } },
      sql: {
        targets: {
          db: {
            dialect: "postgres",
            urlEnv: "IDEM_TEST_SQL_URL",
            statements: { note: { sql: "SELECT 1", params: [] } },
          },
        },
      },
    });
    const r = await checkedFetch(`${env.api.url}/v1/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(await r.json()).toEqual(openApiDocument({ effects: BUILT_IN_KINDS.map((k) => k.spec) }));
    const authorized = await checkedFetch(`${env.api.url}/v1/openapi.json`, {
      headers: { authorization: "Bearer s3cret" },
    });
    expect(authorized.status).toBe(200);
    // The exemption is this one path: its neighbours still ask for the token.
    expect((await checkedFetch(`${env.api.url}/v1/status`)).status).toBe(401);
  });

  it("has every route the server has, and no route the server lacks", async () => {
    await using tj = await tempJournal();
    const app = createApiApp({
      config: testConfig({ dir: tj.dir, journalPath: tj.path }),
      journal: tj.journal,
      metrics: createExecutorMetrics(),
      logger: silentLogger(),
    });
    // Middleware (the token check) is registered for every method; routes have one.
    const served = app.routes
      .filter((r) => r.method !== "ALL")
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`);
    expect([...new Set(served)].sort()).toEqual(openapi.operations().sort());
  });
});
