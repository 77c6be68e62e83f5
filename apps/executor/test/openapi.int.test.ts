// Every response docs/openapi.json lists is one the executor's API really gives, and each matches
// its schema; and the checker the API tests use refuses what the document does not describe.

import { fdatasync } from "node:fs";
import { BUILT_IN_KINDS } from "@idem/effects";
import type { JournalStore, SqliteJournalOptions } from "@idem/journal";
import { silentLogger } from "@idem/runtime";
import { openApiDocument } from "@idem/schema";
import { createOpenApiChecker, type OpenApiChecker, tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createApiApp, createExecutorMetrics } from "../src/index.js";
import { testConfig } from "./helpers.js";

/** The API in process (Hono's app.request), every answer checked by `checker`. */
async function inProcessApi(
  checker: OpenApiChecker,
  options: { extra?: Record<string, unknown>; natsUrl?: string; journal?: SqliteJournalOptions },
) {
  const tj = await tempJournal(options.journal);
  const app = createApiApp({
    config: testConfig({
      dir: tj.dir,
      journalPath: tj.path,
      ...(options.extra ? { extra: options.extra } : {}),
      ...(options.natsUrl ? { natsUrl: options.natsUrl } : {}),
    }),
    journal: tj.journal,
    metrics: createExecutorMetrics(),
    logger: silentLogger(),
  });
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    token?: string,
    extra: Record<string, string> = {},
  ) => {
    const headers: Record<string, string> = {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...extra,
    };
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
    const r = await app.request(`http://127.0.0.1${path}`, init);
    return (await checker.check({ method, path }, r)).status;
  };
  return { tj, call, [Symbol.asyncDispose]: () => tj.dispose() };
}

const output = (jobId: string, summary = "s") => ({ jobId, agent: "writer", summary, effects: [] });

/** Records these outputs and parks each run awaiting approval of its effect 0 (docs/approvals.md). */
async function parkAwaiting(journal: JournalStore, jobIds: readonly string[]): Promise<void> {
  for (const jobId of jobIds)
    await journal.outputs.record(output(jobId), { source: "cli", targets: [] });
  for (const _ of jobIds) {
    const claim = await journal.runs.claim({ owner: "t", leaseMs: 600_000, maxLeaseExpiries: 3 });
    if (!claim) throw new Error("nothing to claim");
    const request = {
      digest: claim.output.contentHash,
      effects: [0],
      rules: ["r"],
      expiresAt: Date.now() + 3_600_000,
    };
    await journal.approvals.request(claim.lease, request);
  }
}
const job = (jobId: string, input: unknown = {}) => ({ jobId, agent: "writer", input });

describe("docs/openapi.json against the executor's API", () => {
  it("lists no response the server cannot give: each one is given here, and matches its schema", async () => {
    const checker = createOpenApiChecker(
      openApiDocument({ effects: BUILT_IN_KINDS.map((k) => k.spec) }),
    );
    let failing = false;
    const eio = Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
    const token = "s3cret";
    {
      await using api = await inProcessApi(checker, {
        extra: { api: { token, maxBodyBytes: 4096 } },
        journal: {
          fdatasync: (fd, done) => (failing ? setImmediate(() => done(eio)) : fdatasync(fd, done)),
        },
      });
      const { call } = api;
      await parkAwaiting(api.tj.journal, ["a-1", "a-2", "a-3"]);
      expect(await call("GET", "/v1/openapi.json")).toBe(200);
      for (const [method, path] of [
        ["POST", "/v1/outputs"],
        ["POST", "/v1/jobs"],
        ["GET", "/v1/outputs/o-1"],
        ["GET", "/v1/status"],
        ["GET", "/v1/approvals"],
        ["POST", "/v1/approvals/a-1/approve"],
        ["POST", "/v1/approvals/a-1/reject"],
      ] as const) {
        expect(await call(method, path, method === "POST" ? {} : undefined), path).toBe(401);
      }
      expect(await call("POST", "/v1/outputs", output("o-1"), token)).toBe(201);
      expect(await call("POST", "/v1/outputs", output("o-1"), token)).toBe(200);
      expect(await call("POST", "/v1/outputs", output("o-1", "other"), token)).toBe(409);
      expect(await call("POST", "/v1/outputs", "{", token)).toBe(400);
      expect(await call("POST", "/v1/outputs", output("o-2", "x".repeat(8192)), token)).toBe(413);
      expect(await call("POST", "/v1/jobs", job("j-1"), token)).toBe(201);
      expect(await call("POST", "/v1/jobs", job("j-1"), token)).toBe(200);
      expect(await call("POST", "/v1/jobs", job("j-1", { n: 2 }), token)).toBe(409);
      expect(await call("POST", "/v1/jobs", [job("j-2")], token)).toBe(400);
      expect(await call("POST", "/v1/jobs", { ...job("j-2"), agent: "nobody" }, token)).toBe(400);
      expect(await call("POST", "/v1/jobs", job("j-3", "x".repeat(8192)), token)).toBe(413);
      expect(await call("GET", "/v1/outputs/o-1", undefined, token)).toBe(200);
      expect(await call("GET", "/v1/outputs/o-9", undefined, token)).toBe(404);
      expect(await call("GET", "/v1/outputs/-bad", undefined, token)).toBe(400);
      expect(await call("GET", "/v1/status", undefined, token)).toBe(200);
      expect(await call("GET", "/v1/approvals", undefined, token)).toBe(200);
      const decision = { reason: "looked at it", actor: "ana" };
      for (const action of ["approve", "reject"]) {
        const path = (jobId: string) => `/v1/approvals/${jobId}/${action}`;
        expect(await call("POST", path("a-1"), { ...decision, reason: " " }, token)).toBe(400);
        expect(await call("POST", path("nope"), decision, token)).toBe(404);
        const other = { ...decision, digest: "0".repeat(64) };
        expect(await call("POST", path("a-1"), other, token)).toBe(409);
        const big = { ...decision, reason: "x".repeat(8192) };
        expect(await call("POST", path("a-1"), big, token)).toBe(413);
        expect(
          await call("POST", path("a-1"), decision, token, { "content-type": "text/plain" }),
        ).toBe(415);
      }
      expect(await call("POST", "/v1/approvals/a-1/approve", decision, token)).toBe(200);
      expect(await call("POST", "/v1/approvals/a-2/reject", decision, token)).toBe(200);
      expect(await api.tj.journal.runs.latest("a-2")).toMatchObject({ class: "rejected" });
      expect(await call("GET", "/healthz")).toBe(200);
      expect(await call("GET", "/metrics")).toBe(200);
      // A body not declared JSON and a browser's cross-site request: refused on every route,
      // whatever the token.
      for (const path of ["/v1/outputs", "/v1/jobs"])
        expect(
          await call("POST", path, output("o-5"), token, { "content-type": "text/plain" }),
        ).toBe(415);
      for (const [method, path] of [
        ["POST", "/v1/outputs"],
        ["POST", "/v1/jobs"],
        ["GET", "/v1/outputs/o-1"],
        ["GET", "/v1/status"],
        ["GET", "/v1/approvals"],
        ["POST", "/v1/approvals/a-3/approve"],
        ["POST", "/v1/approvals/a-3/reject"],
        ["GET", "/v1/openapi.json"],
        ["GET", "/healthz"],
        ["GET", "/metrics"],
      ] as const) {
        const body = method === "POST" ? output("o-6") : undefined;
        expect(
          await call(method, path, body, token, { "sec-fetch-site": "cross-site" }),
          path,
        ).toBe(403);
      }
      failing = true;
      expect(await call("POST", "/v1/outputs", output("o-3"), token)).toBe(503);
      expect(await call("POST", "/v1/jobs", job("j-4"), token)).toBe(503);
      const late = { reason: "r", actor: "ana" };
      expect(await call("POST", "/v1/approvals/a-3/approve", late, token)).toBe(503);
      expect(await call("POST", "/v1/approvals/a-3/reject", late, token)).toBe(503);
      expect(await call("GET", "/healthz")).toBe(503);
      await api.tj.journal.close();
      expect(await call("GET", "/v1/outputs/o-1", undefined, token)).toBe(503);
      expect(await call("GET", "/v1/status", undefined, token)).toBe(503);
      expect(await call("GET", "/v1/approvals", undefined, token)).toBe(503);
      expect(await call("GET", "/metrics")).toBe(503);
    }
    {
      // Without a token on loopback: a DNS-rebound Host is refused on every route.
      await using api = await inProcessApi(checker, {});
      for (const [method, path] of [
        ["POST", "/v1/outputs"],
        ["POST", "/v1/jobs"],
        ["GET", "/v1/outputs/o-1"],
        ["GET", "/v1/status"],
        ["GET", "/v1/approvals"],
        ["POST", "/v1/approvals/a-1/approve"],
        ["POST", "/v1/approvals/a-1/reject"],
        ["GET", "/v1/openapi.json"],
        ["GET", "/healthz"],
        ["GET", "/metrics"],
      ] as const) {
        const body = method === "POST" ? output("o-7") : undefined;
        expect(await api.call(method, path, body, undefined, { host: "evil.example" }), path).toBe(
          421,
        );
      }
    }
    {
      // On JetStream without the executor's publisher (no connection is made).
      await using api = await inProcessApi(checker, { natsUrl: "nats://127.0.0.1:1" });
      expect(await api.call("POST", "/v1/jobs", job("j-5"))).toBe(501);
    }
    const missing = checker.documented().filter((r) => !checker.seen.has(r));
    expect(missing, "documented responses no request here produced").toEqual([]);
  });
});

describe("createOpenApiChecker", () => {
  const checker = createOpenApiChecker(
    openApiDocument({ effects: BUILT_IN_KINDS.map((k) => k.spec) }),
  );
  const answer = (status: number, body: string, headers: Record<string, string> = {}) =>
    new Response(body, { status, headers: { "content-type": "application/json", ...headers } });
  const refusal = (method: string, path: string, response: Response) =>
    checker.check({ method, path }, response).then(
      () => "accepted",
      (e: Error) => e.message,
    );

  it("accepts a response the document describes, and leaves its body readable", async () => {
    const r = answer(201, JSON.stringify({ status: "recorded", jobId: "a-1" }));
    expect(await checker.check({ method: "POST", path: "/v1/outputs" }, r)).toBe(r);
    expect(await r.json()).toEqual({ status: "recorded", jobId: "a-1" });
  });

  it("refuses a field the schema does not name, a status, a path and a Content-Type it does not list", async () => {
    const extra = answer(201, JSON.stringify({ status: "recorded", jobId: "a-1", at: 1 }));
    expect(await refusal("POST", "/v1/outputs", extra)).toMatch(
      /POST \/v1\/outputs 201 does not match[\s\S]*additional properties/,
    );
    const wrongStatus = answer(201, JSON.stringify({ status: "duplicate", jobId: "a-1" }));
    expect(await refusal("POST", "/v1/outputs", wrongStatus)).toMatch(/\/status/);
    expect(await refusal("GET", "/v1/status", answer(418, "{}"))).toMatch(
      /does not list this status \(it lists 200, 401, 403, 421, 503\)/,
    );
    expect(await refusal("GET", "/v1/nothing", answer(200, "{}"))).toMatch(/no path/);
    expect(await refusal("DELETE", "/v1/status", answer(200, "{}"))).toMatch(/no delete/);
    const html = new Response("<p>hi</p>", {
      status: 200,
      headers: { "content-type": "text/html" },
    });
    expect(await refusal("GET", "/healthz", html)).toMatch(/Content-Type text\/html/);
    expect(await refusal("GET", "/healthz", answer(200, "{not json"))).toMatch(/not JSON/);
  });

  it("refuses a 401 without its WWW-Authenticate header", async () => {
    const body = JSON.stringify({ error: "unauthorized: a bearer token is required" });
    expect(await refusal("GET", "/v1/status", answer(401, body))).toMatch(
      /header WWW-Authenticate is missing/,
    );
    const ok = answer(401, body, { "www-authenticate": 'Bearer realm="idem"' });
    expect(await refusal("GET", "/v1/status", ok)).toBe("accepted");
  });

  it("matches a templated path and checks its answer", async () => {
    const notFound = answer(404, JSON.stringify({ error: "no output for x" }));
    expect(await refusal("GET", "/v1/outputs/x", notFound)).toBe("accepted");
    expect(checker.seen.has("GET /v1/outputs/{jobId} 404")).toBe(true);
  });
});
