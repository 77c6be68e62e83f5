import {
  type Credentials,
  enqueueJob,
  type JobFileProblems,
  kindsOf,
  loadKinds,
  type Principal,
  parseJobFile,
  parseSubmission,
  resolveCredentials,
  SUBMIT_HTTP_STATUS,
  submitOutput,
} from "@idem/core";
import type { JournalStore } from "@idem/journal";
import type { JobPublisher } from "@idem/nats";
import {
  assertListenAllowed,
  crossOriginRefusal,
  type HttpServer,
  hostRefusal,
  isLoopbackHost,
  type Logger,
  metricsHandler,
  serveHttp,
  type Tracing,
} from "@idem/runtime";
import type { Config, Job } from "@idem/schema";
import {
  classifyError,
  describeError,
  ERROR_CODES,
  httpStatusOfError,
  isIdemError,
  isJobId,
  openApiText,
} from "@idem/schema";
import { type Context, Hono, type Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { approvalRoutes } from "./approval-routes.js";
import type { ExecutorMetrics } from "./executor-metrics.js";
import { portInUseError } from "./port-in-use.js";

/** What the HTTP API serves from. */
export interface ApiOptions {
  config: Config;
  journal: JournalStore;
  metrics: ExecutorMetrics;
  logger: Logger;
  /**
   * The executor's JetStream publisher, for `POST /v1/jobs` when `nats` is configured; without it
   * that route answers 501 on JetStream (the embedded queue needs none).
   */
  publisher?: JobPublisher;
  /** Spans of each submit and enqueue, continuing the request's `traceparent` header; default off. */
  tracing?: Tracing;
  /**
   * The address the API listens on (default `api.host`): on a loopback address without
   * `api.token`, a request whose `Host` names anything else is refused (421), as a DNS-rebinding
   * page's would be. With a token the page has no token, and a reverse proxy may pass its own
   * `Host` (the console's rule, docs/security.md).
   */
  host?: string;
  /**
   * The tokens it takes: `api.token` (the operator's) and each agent's (`credentials.<agent>`);
   * default resolved from this process's environment (`resolveCredentials`).
   */
  credentials?: Credentials;
}

/** Where the API serves its OpenAPI 3.1 document (the text of docs/openapi.json), without a token. */
export const OPENAPI_PATH = "/v1/openapi.json";
/** The document's text, built on the first request (pure, the same for every app). */
let openApi: string | undefined;

/** What the routes know of a request once its token is checked. */
type ApiEnv = { Variables: { principal: Principal } };

/** What an agent's token may not do (only the operator's), answered 403. */
const OPERATOR_ONLY = (agent: string, what: string) => ({
  error: `forbidden: agent ${agent}'s token may not ${what}; that takes api.token`,
});

/** Whether a request's body is declared JSON: `application/json`, with or without parameters. */
const isJson = (contentType: string | undefined): boolean =>
  /^application\/json\s*(;|$)/i.test(contentType?.trim() ?? "");

/**
 * The executor's HTTP API: `POST /v1/outputs` (201 recorded, 200 duplicate, 409
 * conflict, 400 invalid with the issues, 403 forbidden for what an agent's token may not record,
 * 401 without a bearer token it knows when `api.token` is set, 413
 * over `api.maxBodyBytes`, 415 for a body not declared `application/json`), `POST /v1/jobs` (see
 * {@link enqueueRoute}), `GET /v1/outputs/:jobId`, `GET /v1/status`, `GET /v1/openapi.json` (the
 * OpenAPI 3.1 document of all of them, open), `GET /healthz` (503 once the journal has failed for
 * good), `GET /metrics`. Every route refuses a browser's cross-site request (403) and, listening on
 * loopback without a token, a `Host` that is not a loopback name (421): a web page can neither
 * post a form to it nor read it by DNS rebinding (docs/security.md). A failure answers its code's HTTP status in
 * ERROR_CODES (503 for every failure of the journal, and for an error without a code) with its
 * class; nothing is half-recorded. Every answer is described by `docs/openapi.json` (`openApiDocument()`
 * of @idem/schema). An agent's token (docs/security.md, "Credentials per agent") records only as
 * its agent, for its jobs, within its scope; it reads only its agent's outputs and enqueues
 * nothing (403).
 * @throws IdemError INVALID_CONFIG from `resolveCredentials` when `credentials` is not given and
 * an agent's token variable is unset or unfit.
 */
export function createApiApp(options: ApiOptions): Hono<ApiEnv> {
  const { config, journal, metrics, logger } = options;
  const app = new Hono<ApiEnv>();
  const credentials = options.credentials ?? resolveCredentials(config, process.env);
  const token = config.api.token;
  const loopbackOnly = token === null && isLoopbackHost(options.host ?? config.api.host);
  const limit = bodyLimit({
    maxSize: config.api.maxBodyBytes,
    onError: (c) =>
      c.json(
        { error: `the body is larger than api.maxBodyBytes (${config.api.maxBodyBytes})` },
        413,
      ),
  });
  // Before any route, the open ones included: a rebound page must not read /metrics either.
  app.use("*", async (c, next) => {
    const host = loopbackOnly ? hostRefusal(c.req.header("host")) : undefined;
    if (host) return c.json({ error: host }, 421);
    const crossSite = crossOriginRefusal({
      secFetchSite: c.req.header("sec-fetch-site"),
      origin: c.req.header("origin"),
      host: c.req.header("host"),
    });
    if (crossSite) return c.json({ error: crossSite }, 403);
    await next();
  });
  // A form of any web page can post text/plain (its JSON split across a field's name and value)
  // without a CORS preflight; a body declared application/json cannot be sent cross-site so.
  const jsonBody = async (c: Context, next: Next) => {
    if (!isJson(c.req.header("content-type")))
      return c.json({ error: "the body must be sent as Content-Type: application/json" }, 415, {
        "Accept-Post": "application/json",
      });
    await next();
  };
  app.use("/v1/*", async (c, next) => {
    // The API description is open, as /healthz is: tools fetch it without credentials, and it
    // holds nothing that is not in docs/openapi.json.
    if (c.req.path === OPENAPI_PATH) return next();
    const principal = credentials.authenticate(c.req.header("authorization"));
    if (!principal) {
      return c.json({ error: "unauthorized: a bearer token is required" }, 401, {
        "WWW-Authenticate": 'Bearer realm="idem"',
      });
    }
    c.set("principal", principal);
    await next();
  });
  app.post("/v1/outputs", jsonBody, limit, async (c) => {
    const parsed = parseSubmission(
      new Uint8Array(await c.req.arrayBuffer()),
      config.limits.maxOutputBytes,
    );
    const principal = c.get("principal");
    const grant = principal.operator ? undefined : principal.grant;
    const result = parsed.ok
      ? await submitOutput({
          journal,
          config,
          raw: parsed.value,
          source: "http",
          grant,
          ...(grant ? { actor: `agent ${grant.agent} (http)` } : {}),
          metrics,
          trace: {
            traceparent: c.req.header("traceparent"),
            ...(options.tracing ? { tracing: options.tracing } : {}),
          },
        })
      : parsed.result;
    if (result.status === "invalid") logger.info({ issues: result.issues }, "invalid submission");
    if (result.status === "forbidden")
      logger.warn(
        { agent: grant?.agent, jobId: result.jobId, issues: result.issues },
        "an agent's token was refused an output outside its grant",
      );
    return c.json(result, SUBMIT_HTTP_STATUS[result.status]);
  });
  app.post("/v1/jobs", jsonBody, limit, async (c) => {
    const principal = c.get("principal");
    if (!principal.operator)
      return c.json(OPERATOR_ONLY(principal.grant.agent, "enqueue jobs"), 403);
    const answer = await enqueueRoute(await c.req.text(), options, c.req.header("traceparent"));
    return c.json(answer.body, answer.status);
  });
  app.get("/v1/outputs/:jobId", async (c) => {
    const jobId = c.req.param("jobId");
    if (!isJobId(jobId)) return c.json({ error: "not a job ID" }, 400);
    const rec = await journal.outputs.get(jobId);
    if (!rec) return c.json({ error: `no output for ${jobId}` }, 404);
    const principal = c.get("principal");
    if (!principal.operator && rec.output.agent !== principal.grant.agent)
      return c.json(OPERATOR_ONLY(principal.grant.agent, "read another agent's output"), 403);
    return c.json(rec);
  });
  app.get("/v1/status", async (c) => c.json(await journal.status()));
  approvalRoutes(app, { config, journal }, { jsonBody, limit });
  app.get(OPENAPI_PATH, (c) => {
    openApi ??= openApiText({ effects: kindsOf(config).kinds.map((k) => k.spec) });
    return c.body(openApi, 200, { "content-type": "application/json" });
  });
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
    return c.json({ error: describeError(e), class: classifyError(e) }, httpStatusOfError(e));
  });
  return app;
}

/**
 * `POST /v1/jobs`: enqueues one Job exactly as `idem enqueue` does (through enqueueJob, on the
 * executor's publisher or the journal's queue). 201 `{ jobId, stream, seq, duplicate }` when new,
 * 200 for a duplicate (safe to repeat), 409 for the job ID with another input, 400 for an invalid
 * job naming the field (or, on the embedded queue, an agent the config does not know), 501 on
 * JetStream when the server was started without the publisher. Journal errors reach onError (their
 * code's status: 503).
 */
async function enqueueRoute(
  text: string,
  options: ApiOptions,
  traceparent: string | undefined,
): Promise<{ status: 200 | 201 | 400 | 409 | 501 | 503; body: object }> {
  const { config, journal, publisher } = options;
  if (config.nats && !publisher) {
    return {
      status: 501,
      body: {
        error:
          "POST /v1/jobs is not served on JetStream by this executor: enqueue with `idem enqueue` or publish to the jobs stream with Nats-Msg-Id",
      },
    };
  }
  // The embedded queue's executor runs this config's agents only: any other would sit queued.
  const agents = config.nats ? {} : { agents: Object.keys(config.agents) };
  let job: Job;
  try {
    const file = parseJobFile(text, "body", agents);
    if (file.batch)
      return {
        status: ERROR_CODES.INVALID_INPUT.http,
        body: { error: "the body must be one Job, not a batch" },
      };
    job = file.jobs[0] as Job;
  } catch (e) {
    if (!isIdemError(e, "INVALID_INPUT")) throw e;
    const { problems } = e.details as unknown as JobFileProblems;
    return { status: ERROR_CODES.INVALID_INPUT.http, body: { error: e.message, problems } };
  }
  try {
    const outcome = await enqueueJob(job, {
      journal,
      ...(publisher ? { publisher } : {}),
      actor: "http",
      traceparent,
      ...(options.tracing ? { tracing: options.tracing } : {}),
    });
    return { status: outcome.duplicate ? 200 : 201, body: outcome };
  } catch (e) {
    if (isIdemError(e, "JOB_CONFLICT"))
      return { status: ERROR_CODES.JOB_CONFLICT.http, body: { error: e.message } };
    if (isIdemError(e, "UNAVAILABLE"))
      return {
        status: ERROR_CODES.UNAVAILABLE.http,
        body: { error: e.message, class: classifyError(e) },
      };
    throw e;
  }
}

/** A listening API server. */
export type ApiServer = HttpServer;

/**
 * Serves {@link createApiApp} on `api.host:api.port` (or the given host and port; 0 picks a free
 * one).
 * @throws INVALID_CONFIG for an address beyond loopback without `api.token` (nothing listens);
 * UNAVAILABLE when the port is taken, naming the holder when it can tell (another idem executor,
 * another idem process) and `--port`, `api.port` and `--no-api`; other listen errors (EACCES) as
 * is.
 */
export async function startApiServer(options: ApiOptions & { port?: number }): Promise<ApiServer> {
  const host = options.host ?? options.config.api.host;
  const port = options.port ?? options.config.api.port;
  assertListenAllowed({
    what: "the HTTP API",
    host,
    token: options.config.api.token,
    hostKey: "api.host",
  });
  // Outputs are checked by their kinds before record: idem's own and the config's (and the agents'
  // scopes against them); every agent's token is read before anything listens.
  await loadKinds(options.config);
  const credentials = options.credentials ?? resolveCredentials(options.config, process.env);
  try {
    return await serveHttp(createApiApp({ ...options, host, credentials }), { host, port });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EADDRINUSE")
      throw await portInUseError(host, port, e);
    throw e;
  }
}
