import { createHash, timingSafeEqual } from "node:crypto";
import {
  type HttpServer,
  type Logger,
  metricsHandler,
  parseSubmission,
  SUBMIT_HTTP_STATUS,
  serveHttp,
  submitOutput,
} from "@idem/core";
import type { JournalStore } from "@idem/journal";
import type { Config } from "@idem/schema";
import { classifyError, describeError, isJobId } from "@idem/schema";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ExecutorMetrics } from "./executor-metrics.js";

/** What the HTTP API serves from. */
export interface ApiOptions {
  config: Config;
  journal: JournalStore;
  metrics: ExecutorMetrics;
  logger: Logger;
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Compares a bearer token in constant time (over fixed-length digests, so length leaks nothing). */
function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  const given = m?.[1] ?? "";
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}

/**
 * The executor's HTTP API (DESIGN.md): `POST /v1/outputs` (201 recorded, 200 duplicate, 409
 * conflict, 400 invalid with the issues, 401 without the bearer token when `api.token` is set, 413
 * over `api.maxBodyBytes`), `GET /v1/outputs/:jobId`, `GET /v1/status`, `GET /healthz` (503
 * once the journal has failed for good), `GET /metrics`. Journal errors answer 503 with their
 * class; nothing is half-recorded.
 */
export function createApiApp(options: ApiOptions): Hono {
  const { config, journal, metrics, logger } = options;
  const app = new Hono();
  const token = config.api.token;
  app.use("/v1/*", async (c, next) => {
    if (token !== null && !tokenMatches(c.req.header("authorization"), token)) {
      return c.json({ error: "unauthorized: a bearer token is required" }, 401, {
        "WWW-Authenticate": 'Bearer realm="idem"',
      });
    }
    await next();
  });
  app.post(
    "/v1/outputs",
    bodyLimit({
      maxSize: config.api.maxBodyBytes,
      onError: (c) =>
        c.json(
          { error: `the body is larger than api.maxBodyBytes (${config.api.maxBodyBytes})` },
          413,
        ),
    }),
    async (c) => {
      const parsed = parseSubmission(await c.req.text(), config.limits.maxOutputBytes);
      const result = parsed.ok
        ? await submitOutput(journal, config, parsed.value, "http", metrics)
        : parsed.result;
      if (result.status === "invalid") logger.info({ issues: result.issues }, "invalid submission");
      return c.json(result, SUBMIT_HTTP_STATUS[result.status]);
    },
  );
  app.get("/v1/outputs/:jobId", async (c) => {
    const jobId = c.req.param("jobId");
    if (!isJobId(jobId)) return c.json({ error: "not a job ID" }, 400);
    const rec = await journal.outputs.get(jobId);
    if (!rec) return c.json({ error: `no output for ${jobId}` }, 404);
    return c.json(rec);
  });
  app.get("/v1/status", async (c) => c.json(await journal.status()));
  // 503 once the journal can no longer make a write durable: a supervisor's liveness probe then
  // restarts the process, the one cure (see JournalStore.failure).
  app.get("/healthz", (c) => {
    const failure = journal.failure;
    return failure ? c.json({ ok: false, error: failure.message }, 503) : c.json({ ok: true });
  });
  app.get(
    "/metrics",
    metricsHandler(metrics.registry, () => metrics.refresh(journal)),
  );
  app.onError((e, c) => {
    logger.error({ err: describeError(e) }, "api error");
    return c.json({ error: describeError(e), class: classifyError(e) }, 503);
  });
  return app;
}

/** A listening API server. */
export type ApiServer = HttpServer;

/**
 * Serves {@link createApiApp} on `api.host:api.port` (or the given port; 0 picks a free one).
 * @throws the listen error (EADDRINUSE, EACCES).
 */
export async function startApiServer(
  options: ApiOptions & { port?: number; host?: string },
): Promise<ApiServer> {
  return await serveHttp(createApiApp(options), {
    host: options.host ?? options.config.api.host,
    port: options.port ?? options.config.api.port,
  });
}
