import { silentLogger } from "@idem/core";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createExecutorMetrics, startApiServer } from "../src/index.js";
import { testConfig } from "./helpers.js";

async function setup(extra: Record<string, unknown> = {}) {
  const tj = await tempJournal();
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
  fetch(`${url}/v1/outputs`, {
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
    const got = await fetch(`${url}/v1/outputs/h-1`);
    expect(got.status).toBe(200);
    expect((await json(got)).output?.summary).toBe("hello");
    expect((await fetch(`${url}/v1/outputs/none`)).status).toBe(404);
    const status = await json(await fetch(`${url}/v1/status`));
    expect(status.outputs).toBe(1);
    expect(status.rejections).toBe(1);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/idem_executor_records_total\{source="http",status="recorded"\} 1/);
    expect(metrics).toMatch(/idem_runs\{state="pending"\} 1/);
  });

  it("answers 401 without the bearer token when one is configured", async () => {
    await using env = await setup({ api: { token: "s3cret" } });
    const { url } = env.api;
    expect((await post(url, output("t-1"))).status).toBe(401);
    expect((await post(url, output("t-1"), { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await fetch(`${url}/v1/status`)).status).toBe(401);
    expect((await post(url, output("t-1"), { authorization: "Bearer s3cret" })).status).toBe(201);
  });

  it("answers 413 over api.maxBodyBytes and records nothing", async () => {
    await using env = await setup({ api: { maxBodyBytes: 1024 } });
    const big = { ...output("b-1"), summary: "x".repeat(2048) };
    const r = await post(env.api.url, big);
    expect(r.status).toBe(413);
    expect(await env.tj.journal.outputs.has("b-1")).toBe(false);
  });
});
