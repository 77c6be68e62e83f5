// The API against a hostile web page (docs/security.md): a form's text/plain POST, a cross-site
// Origin or Sec-Fetch-Site, a DNS-rebound Host; and no API beyond loopback without a token.
import { request } from "node:http";
import { silentLogger } from "@idem/runtime";
import { isIdemError } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createExecutorMetrics, startApiServer } from "../src/index.js";
import { testConfig } from "./helpers.js";

async function setup(api: Record<string, unknown> = {}, host?: string) {
  const tj = await tempJournal();
  const config = testConfig({ dir: tj.dir, journalPath: tj.path, extra: { api } });
  const server = await startApiServer({
    config,
    journal: tj.journal,
    metrics: createExecutorMetrics(),
    logger: silentLogger(),
    port: 0,
    ...(host !== undefined && { host }),
  });
  return {
    tj,
    server,
    async [Symbol.asyncDispose]() {
      await server.close();
      await tj.dispose();
    },
  };
}

/** One request with exactly these headers (fetch would not let a test set Host). */
function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, headers, agent: false, setHost: false },
      (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          data += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const output = (jobId: string) => ({ jobId, agent: "writer", effects: [] });
/**
 * What `<form enctype="text/plain">` posts: `name=value\r\n`, the JSON split inside the summary,
 * so that the `=` lands in a string and the body is a valid output.
 */
const formBody = (jobId: string) =>
  `{"jobId":"${jobId}","agent":"writer","summary":"x=","effects":[]}\r\n`;

describe("the API against a web page", () => {
  it("refuses a form's text/plain body and a cross-site request, on a token-less loopback API, and records nothing", async () => {
    await using env = await setup();
    const { port } = env.server;
    const host = `127.0.0.1:${port}`;
    // The body a page's form posts to a token-less executor: cross-site, text/plain.
    const form = await raw(
      port,
      "POST",
      "/v1/outputs",
      {
        host,
        "content-type": "text/plain",
        origin: "http://evil.example",
        "sec-fetch-site": "cross-site",
      },
      formBody("evil-1"),
    );
    expect(form.status).toBe(403);
    // Each guard alone refuses it too.
    const plain = { host, "content-type": "text/plain" };
    expect((await raw(port, "POST", "/v1/outputs", plain, formBody("evil-2"))).status).toBe(415);
    expect((await raw(port, "POST", "/v1/jobs", plain, "{}")).status).toBe(415);
    expect(
      (await raw(port, "POST", "/v1/outputs", { host }, JSON.stringify(output("evil-3")))).status,
    ).toBe(415);
    const json = { host, "content-type": "application/json" };
    for (const headers of [
      { ...json, origin: "http://evil.example" },
      { ...json, origin: "null" },
      { ...json, "sec-fetch-site": "cross-site" },
      { ...json, "sec-fetch-site": "same-site" },
    ]) {
      const r = await raw(port, "POST", "/v1/outputs", headers, JSON.stringify(output("evil-4")));
      expect(r.status, JSON.stringify(headers)).toBe(403);
    }
    expect((await env.tj.journal.status()).outputs).toBe(0);
    // A script, and the API's own origin, still go on.
    const ok = await raw(
      port,
      "POST",
      "/v1/outputs",
      { ...json, "content-type": "application/json; charset=utf-8" },
      JSON.stringify(output("ok-1")),
    );
    expect(ok.status, ok.body).toBe(201);
    const same = await raw(
      port,
      "POST",
      "/v1/outputs",
      { ...json, origin: `http://${host}`, "sec-fetch-site": "same-origin" },
      JSON.stringify(output("ok-2")),
    );
    expect(same.status, same.body).toBe(201);
    expect((await env.tj.journal.status()).outputs).toBe(2);
  });

  it("answers only loopback Host names on loopback: a DNS-rebound page cannot read an output", async () => {
    await using env = await setup();
    const { port } = env.server;
    expect(
      (
        await raw(
          port,
          "POST",
          "/v1/outputs",
          { host: `localhost:${port}`, "content-type": "application/json" },
          JSON.stringify(output("read-1")),
        )
      ).status,
    ).toBe(201);
    for (const path of ["/v1/outputs/read-1", "/v1/status", "/metrics", "/healthz"]) {
      const r = await raw(port, "GET", path, { host: `rebind.evil.example:${port}` });
      expect(r.status, path).toBe(421);
      expect(r.body).not.toContain("read-1");
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "app.localhost"])
      expect((await raw(port, "GET", "/v1/outputs/read-1", { host })).status, host).toBe(200);
  });

  it("refuses to listen beyond loopback without api.token, naming it; with one it listens and leaves Host to a proxy", async () => {
    const tj = await tempJournal();
    try {
      const err = await startApiServer({
        config: testConfig({ dir: tj.dir, journalPath: tj.path }),
        journal: tj.journal,
        metrics: createExecutorMetrics(),
        logger: silentLogger(),
        host: "0.0.0.0",
        port: 0,
      }).catch((e: unknown) => e);
      expect(isIdemError(err, "INVALID_CONFIG")).toBe(true);
      expect((err as Error).message).toMatch(/api\.token/);
      expect((err as Error).message).toMatch(/--host/);
    } finally {
      await tj.dispose();
    }
    // On loopback with a token, a rebound page has no token: it reads nothing either.
    {
      await using env = await setup({ token: "t0ken" });
      const r = await raw(env.server.port, "GET", "/v1/status", { host: "rebind.evil.example" });
      expect(r.status).toBe(401);
    }
    await using env = await setup({ token: "t0ken" }, "0.0.0.0");
    const r = await raw(env.server.port, "GET", "/v1/status", {
      host: "idem.example.org",
      authorization: "Bearer t0ken",
    });
    expect(r.status).toBe(200);
  });
});
