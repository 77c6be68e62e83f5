import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { startMetricsServer } from "../src/index.js";

describe("startMetricsServer", () => {
  it("serves the registry as Prometheus text on /metrics and nothing else", async () => {
    const registry = new Registry();
    const counter = new Counter({
      name: "idem_test_total",
      help: "a test counter",
      registers: [registry],
    });
    counter.inc(3);
    await using server = await startMetricsServer({ registry, port: 0 });
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toBe(registry.contentType);
    expect(await metrics.text()).toContain("idem_test_total 3");
    const other = await fetch(`${server.url}/status`);
    expect(other.status).toBe(404);
  });

  it("closes twice without error and stops answering", async () => {
    const server = await startMetricsServer({ registry: new Registry(), port: 0 });
    await server.close();
    await server.close();
    await expect(fetch(`${server.url}/metrics`)).rejects.toThrow();
  });
});
