// The HTTP API on a port that is taken: UNAVAILABLE naming what holds it when it can tell (another
// idem executor, another idem process, another program) and the ways out (--port, api.port,
// --no-api), instead of a bare `listen EADDRINUSE`. Real servers on loopback ports.
import { createServer as createHttpServer } from "node:http";
import { createServer as createNetServer, type Server } from "node:net";
import { silentLogger, startMetricsServer } from "@idem/runtime";
import { isIdemError } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createExecutorMetrics, startApiServer } from "../src/index.js";
import { testConfig } from "./helpers.js";

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  if (typeof addr !== "object" || addr === null) throw new Error("no address");
  return addr.port;
}

const closed = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** Starts an API on `port` and returns what it threw. */
async function startOn(port: number): Promise<unknown> {
  await using tj = await tempJournal();
  const config = testConfig({ dir: tj.dir, journalPath: tj.path });
  try {
    const api = await startApiServer({
      config,
      journal: tj.journal,
      metrics: createExecutorMetrics(),
      logger: silentLogger(),
      port,
    });
    await api.close();
    return undefined;
  } catch (e) {
    return e;
  }
}

function expectPortInUse(e: unknown, port: number, heldBy: string): void {
  expect(isIdemError(e, "UNAVAILABLE"), String(e)).toBe(true);
  const err = e as Error & { details?: Record<string, unknown>; cause?: { code?: string } };
  expect(err.details).toEqual({ host: "127.0.0.1", port, heldBy });
  expect(err.cause?.code).toBe("EADDRINUSE");
  // The ways out, in the one line the CLI prints.
  expect(err.message).toContain(`127.0.0.1:${port}`);
  for (const way of ["--port", "api.port", "--no-api"]) expect(err.message).toContain(way);
}

describe("the HTTP API on a port that is taken", () => {
  it("names another idem executor holding it (its /v1/openapi.json is idem's)", async () => {
    await using tj = await tempJournal();
    const config = testConfig({ dir: tj.dir, journalPath: tj.path });
    const first = await startApiServer({
      config,
      journal: tj.journal,
      metrics: createExecutorMetrics(),
      logger: silentLogger(),
      port: 0,
    });
    try {
      expectPortInUse(await startOn(first.port), first.port, "idem-executor");
    } finally {
      await first.close();
    }
  });

  it("names another idem process by its metrics (an interpreter's metrics port)", async () => {
    const metrics = createExecutorMetrics();
    const server = await startMetricsServer({ registry: metrics.registry, port: 0 });
    try {
      expectPortInUse(await startOn(server.port), server.port, "idem");
    } finally {
      await server.close();
    }
  });

  it("says another program answers HTTP there, or only that it is held when nothing answers HTTP", async () => {
    const http = createHttpServer((_req, res) => res.end("hello"));
    const httpPort = await listening(http);
    try {
      expectPortInUse(await startOn(httpPort), httpPort, "other");
    } finally {
      await closed(http);
    }
    const tcp = createNetServer((socket) => socket.destroy());
    const tcpPort = await listening(tcp);
    try {
      expectPortInUse(await startOn(tcpPort), tcpPort, "unknown");
    } finally {
      await closed(tcp);
    }
  });
});
