// The HTTP API reference of docs/agents.md, route by route, against the executor's real app
// (in process: Hono's app.request, a temp journal). A status code or body the docs state and the
// code does not give fails here.

import { createApiApp, createExecutorMetrics } from "@idem/executor";
import { silentLogger } from "@idem/runtime";
import { type Config, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { agentsDocExamples } from "./agents-doc-examples.js";

/** The `<!-- idem:config -->` example of docs/agents.md with `api` overridden. */
function docsConfig(dir: string, api: Record<string, unknown> = {}): Config {
  const example = agentsDocExamples().config[0];
  if (!example) throw new Error("docs/agents.md has no <!-- idem:config --> block");
  const raw = { ...(example.value as object), api };
  const r = parseConfig(raw, { dir });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

async function setup(api: Record<string, unknown> = {}) {
  const tj = await tempJournal();
  const app = createApiApp({
    config: docsConfig(tj.dir, api),
    journal: tj.journal,
    metrics: createExecutorMetrics(),
    logger: silentLogger(),
  });
  const request = (path: string, init: RequestInit = {}) =>
    app.request(`http://127.0.0.1${path}`, init);
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    request("/v1/outputs", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return { request, post, [Symbol.asyncDispose]: () => tj.dispose() };
}

const report = (summary?: string) => ({
  jobId: "report-1",
  agent: "reporter",
  ...(summary === undefined ? {} : { summary }),
  effects: [],
});

describe("the HTTP API as docs/agents.md describes it", () => {
  it("answers POST /v1/outputs with 201 recorded, 200 duplicate, 409 conflict and 400 invalid", async () => {
    await using api = await setup();
    const recorded = await api.post(report());
    expect(recorded.status).toBe(201);
    expect(await recorded.json()).toEqual({ status: "recorded", jobId: "report-1" });
    const duplicate = await api.post(report());
    expect(duplicate.status).toBe(200);
    expect(await duplicate.json()).toEqual({ status: "duplicate", jobId: "report-1" });
    const conflict = await api.post(report("other content"));
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toEqual({ status: "conflict", jobId: "report-1" });

    const invalid = await api.post({
      jobId: "bad-1",
      agent: "writer",
      effects: [{ kind: "file.write", root: "outbox", path: "../../etc/passwd", content: "x" }],
    });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({
      status: "invalid",
      jobId: "bad-1",
      issues: [{ path: "effects.0.path", message: "may not contain '..'" }],
    });
    const unknownRepo = await api.post({
      jobId: "build-42",
      agent: "writer",
      effects: [
        { kind: "git.commit", repo: "sit", message: "m", files: [{ path: "a", content: "" }] },
      ],
    });
    expect(unknownRepo.status).toBe(400);
    expect(await unknownRepo.json()).toEqual({
      status: "invalid",
      jobId: "build-42",
      issues: [{ path: "effects.0.repo", message: 'unknown repo alias "sit"' }],
    });
    const notJson = await api.post("{ not json");
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({
      status: "invalid",
      jobId: null,
      issues: [{ path: "" }],
    });
  });

  it("answers GET /v1/outputs/:jobId with the record, 404 for an unknown job and 400 for a bad ID", async () => {
    await using api = await setup();
    expect((await api.post(report())).status).toBe(201);
    const found = await api.request("/v1/outputs/report-1");
    expect(found.status).toBe(200);
    const record = (await found.json()) as Record<string, unknown>;
    expect(Object.keys(record).sort()).toEqual(
      ["agent", "contentHash", "jobId", "output", "recordedAt", "seq", "source"].sort(),
    );
    expect(record).toMatchObject({
      jobId: "report-1",
      agent: "reporter",
      source: "http",
      output: { jobId: "report-1", agent: "reporter", effects: [] },
    });
    expect(record.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof record.seq).toBe("number");
    expect(typeof record.recordedAt).toBe("number");

    const missing = await api.request("/v1/outputs/report-2");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "no output for report-2" });
    const bad = await api.request("/v1/outputs/-bad");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "not a job ID" });
  });

  it("answers GET /v1/status, /healthz and /metrics, and 404 for any other path", async () => {
    await using api = await setup();
    const status = await api.request("/v1/status");
    expect(status.status).toBe(200);
    const counts = (await status.json()) as Record<string, unknown>;
    expect(Object.keys(counts).sort()).toEqual(
      [
        "deadLetters",
        "effects",
        "jobs",
        "jobsWaiting",
        "outputs",
        "rejectedBodies",
        "rejections",
        "runs",
      ].sort(),
    );
    expect(Object.keys(counts.runs as object).sort()).toEqual(
      ["awaiting", "dead", "done", "failed", "pending", "running"].sort(),
    );
    expect(Object.keys(counts.effects as object).sort()).toEqual(
      ["applied", "failed", "intended", "present", "skipped", "uncertain"].sort(),
    );
    expect(Object.keys(counts.jobs as object).sort()).toEqual(
      ["dead", "done", "queued", "running"].sort(),
    );

    const health = await api.request("/healthz");
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });

    const metrics = await api.request("/metrics");
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    for (const name of [
      "idem_runs",
      "idem_effects",
      "idem_outputs",
      "idem_dead_letters",
      "idem_executor_deliveries_total",
      "idem_executor_redeliveries_skipped_total",
      "idem_executor_records_total",
      "idem_executor_conflicts_total",
      "idem_executor_invalid_outputs_total",
      "idem_executor_naks_total",
      "idem_executor_dead_letters_total",
      "idem_executor_record_retries_total",
      "idem_executor_agent_run_seconds",
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect((await api.request("/v2/anything")).status).toBe(404);
  });

  it("asks every /v1/ route for the bearer token when api.token is set, and leaves /healthz, /metrics and /v1/openapi.json open", async () => {
    await using api = await setup({ token: "s3cret" });
    for (const [path, init] of [
      [
        "/v1/outputs",
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(report()),
        },
      ],
      ["/v1/outputs/report-1", {}],
      ["/v1/status", {}],
    ] as const) {
      for (const headers of [{}, { authorization: "Bearer wrong" }] as Record<string, string>[]) {
        const res = await api.request(path, { ...init, headers });
        expect(res.status, path).toBe(401);
        expect(res.headers.get("www-authenticate")).toBe('Bearer realm="idem"');
        expect(await res.json()).toEqual({ error: "unauthorized: a bearer token is required" });
      }
    }
    expect((await api.post(report(), { authorization: "Bearer s3cret" })).status).toBe(201);
    const read = await api.request("/v1/outputs/report-1", {
      headers: { authorization: "Bearer s3cret" },
    });
    expect(read.status).toBe(200);
    expect((await api.request("/healthz")).status).toBe(200);
    expect((await api.request("/metrics")).status).toBe(200);
    expect((await api.request("/v1/openapi.json")).status).toBe(200);
  });

  it("answers 413 for a body over api.maxBodyBytes", async () => {
    await using api = await setup({ maxBodyBytes: 64 });
    const res = await api.post({ ...report(), summary: "x".repeat(200) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "the body is larger than api.maxBodyBytes (64)" });
  });
});
