import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { HttpRequestSpec } from "@idem/effects";
import { isIdemError } from "@idem/schema";
import { configSection } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEffects } from "../src/index.js";
import { sandbox } from "./helpers.js";

interface Seen {
  method: string;
  url: string;
  key: string | undefined;
  body: string;
}

describe("http.request (local node:http server)", () => {
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
  const done = new Set<string>();
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        const key = req.headers["idempotency-key"] as string | undefined;
        seen.push({ method: req.method ?? "", url: req.url ?? "", key, body });
        const url = req.url ?? "";
        if (url.startsWith("/hooks/status")) {
          res.statusCode = key && done.has(key) ? 200 : 404;
          return res.end();
        }
        if (url === "/hooks/slow") return; // never answers
        if (url === "/hooks/reset") return req.socket.destroy();
        if (url === "/hooks/fail") {
          res.statusCode = 503;
          return res.end("down");
        }
        if (url === "/hooks/bad") {
          res.statusCode = 400;
          return res.end("bad");
        }
        if (url === "/hooks/busy") {
          res.statusCode = 429;
          return res.end();
        }
        if (key) done.add(key);
        res.statusCode = 201;
        res.end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  function effects(
    target: Partial<{
      idempotencyKeys: boolean;
      probeUrl: string | null;
      timeoutMs: number;
      baseUrl: string;
    }> = {},
  ) {
    const sb = sandbox();
    configSection(sb.config, "http", () => ({
      targets: {} as Record<string, unknown>,
    })).targets.hooks = {
      baseUrl: `${base}/hooks`,
      idempotencyKeys: false,
      probeUrl: null,
      // Far beyond an answer from this process's own server on a busy machine; the tests of the
      // timeout set a short one, for a request that is never answered.
      timeoutMs: 60_000,
      ...target,
    };
    return { fx: createEffects(sb.config), sb };
  }
  const req = (path: string, extra: Partial<HttpRequestSpec> = {}): HttpRequestSpec => ({
    kind: "http.request",
    target: "hooks",
    method: "POST",
    path,
    body: { hello: "world" },
    ...extra,
  });

  it("sends Idempotency-Key and the JSON body under the base URL", async () => {
    const { fx, sb } = effects();
    const d = await fx.apply(req("/deliver?x=1"), "h-1/0");
    expect(d).toMatchObject({ status: 201 });
    const last = seen.at(-1);
    expect(last).toMatchObject({
      method: "POST",
      url: "/hooks/deliver?x=1",
      key: "h-1/0",
      body: '{"hello":"world"}',
    });
    expect(fx.probeable(req("/deliver"))).toBe(false);
    expect(fx.targetDedup(req("/deliver"))).toBe(false);
    await fx.close();
    sb.cleanup();
  });

  it("probes with probeUrl: 404 absent, 200 present", async () => {
    const { fx, sb } = effects({ probeUrl: "/status" });
    expect(fx.probeable(req("/deliver"))).toBe(true);
    expect((await fx.probe(req("/deliver"), "h-2/0")).status).toBe("absent");
    await fx.apply(req("/deliver"), "h-2/0");
    expect((await fx.probe(req("/deliver"), "h-2/0")).status).toBe("present");
    await fx.close();
    sb.cleanup();
  });

  it("classifies failures: unknown outcome, unavailable, rate limits and client errors", async () => {
    const slow = effects({ timeoutMs: 300 });
    await expect(slow.fx.apply(req("/slow"), "h-3/0")).rejects.toSatisfy((e) =>
      isIdemError(e, "OUTCOME_UNKNOWN"),
    );
    await slow.fx.close();
    slow.sb.cleanup();
    const { fx, sb } = effects();
    await expect(fx.apply(req("/reset"), "h-3/1")).rejects.toSatisfy((e) =>
      isIdemError(e, "OUTCOME_UNKNOWN"),
    );
    await expect(fx.apply(req("/fail"), "h-3/2")).rejects.toSatisfy(
      (e) => isIdemError(e, "UNAVAILABLE") && e.retryable,
    );
    await expect(fx.apply(req("/busy"), "h-3/3")).rejects.toSatisfy(
      (e) => isIdemError(e) && e.retryable,
    );
    await expect(fx.apply(req("/bad"), "h-3/4")).rejects.toSatisfy(
      (e) => isIdemError(e) && !e.retryable,
    );
    await fx.close();
    sb.cleanup();
    const dedup = effects({ timeoutMs: 300, idempotencyKeys: true });
    await expect(dedup.fx.apply(req("/slow"), "h-3/5")).rejects.toSatisfy((e) =>
      isIdemError(e, "TIMEOUT"),
    );
    await dedup.fx.close();
    dedup.sb.cleanup();
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = effects({ baseUrl: `http://127.0.0.1:${port}/hooks` });
    await expect(refused.fx.apply(req("/x"), "h-3/6")).rejects.toSatisfy((e) =>
      isIdemError(e, "UNAVAILABLE"),
    );
    await refused.fx.close();
    refused.sb.cleanup();
  });
});
