import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { type Credentials, OPERATOR, type Principal } from "@idem/core";
import {
  crossOriginRefusal,
  type HttpServer,
  hostRefusal,
  isLoopbackHost,
  serveHttp,
} from "@idem/runtime";
import { describeError } from "@idem/schema";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type Context, Hono } from "hono";
import type { JobDraft } from "./job-draft.js";
import type { FinishMode, McpContext, SessionJob } from "./mcp-context.js";
import { resolveJob } from "./session-job.js";
import { createSessionServer, type McpSession } from "./session-server.js";

/** Where the MCP endpoint is served. */
export const MCP_PATH = "/mcp";

/** How the Streamable HTTP endpoint serves its sessions. */
export interface McpHttpOptions {
  context: McpContext;
  /**
   * Required on every request as `Authorization: Bearer <token>` (`api.token`, or an executor's
   * per-job secret); null: none, which only loopback allows (see `assertListenAllowed`).
   */
  token: string | null;
  /**
   * The tokens of the config (`resolveCredentials`): `api.token` opens an operator's session, an
   * agent's token one held to that agent (its own jobs, its scope, no operators' tools). When
   * given, it decides who a request is instead of `token` alone.
   */
  credentials?: Credentials | undefined;
  /**
   * The address it listens on: on loopback without a token, a request whose `Host` is not a
   * loopback name is refused (421), as a DNS-rebound page's would be (docs/security.md).
   */
  host: string;
  /** Every session works on this job; else each on the job its URL names (`?job=<id>&agent=<name>`). */
  job?: SessionJob | undefined;
  finish: FinishMode;
  /** The draft every session shares (with `job`); default one per session. */
  draft?: JobDraft | undefined;
  /** Open sessions at most; a new one beyond answers 503 (default 100). */
  maxSessions?: number;
  /** A session unused this long is closed when a new one starts (default 1 hour). */
  idleMs?: number;
}

/** The hono app of the endpoint, not listening; `close` ends every session. */
export interface McpHttpApp {
  readonly app: Hono;
  /** Open sessions now. */
  sessions(): number;
  close(): Promise<void>;
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** A bearer token compared in constant time (over fixed-length digests, as the API does). */
function tokenMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(.+)$/i.exec(header ?? "")?.[1] ?? "";
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}

/** A JSON-RPC error body without an id, for answers given before the protocol starts. */
const rpcError = (code: number, message: string) => ({
  jsonrpc: "2.0",
  error: { code, message },
  id: null,
});

interface OpenSession {
  transport: WebStandardStreamableHTTPServerTransport;
  session: McpSession;
  lastUsed: number;
  /** Who opened it: every later request of the session must be the same one. */
  principal: Principal;
}

/** Whether two principals are the same credential. */
const same = (a: Principal, b: Principal) =>
  a.operator === b.operator && (a.operator || b.operator || a.grant.agent === b.grant.agent);

/**
 * The MCP Streamable HTTP endpoint at `/mcp` (docs/mcp.md, "Over HTTP"): one stateful session per
 * `initialize` (its `Mcp-Session-Id`), each with its own draft. Before anything, the browser guards
 * of the API: a cross-site request is refused (403), and on loopback without a token a `Host` that
 * is not a loopback name (421); then the bearer token when there is one (401). An unknown session
 * answers 404, a request without one that is not an `initialize` 400.
 */
export function createMcpHttpApp(options: McpHttpOptions): McpHttpApp {
  const { context, token, finish } = options;
  const maxSessions = options.maxSessions ?? 100;
  const idleMs = options.idleMs ?? 3_600_000;
  const loopbackOnly = token === null && isLoopbackHost(options.host);
  const open = new Map<string, OpenSession>();
  const principals = new WeakMap<Request, Principal>();
  const principalOf = (c: Context) => principals.get(c.req.raw) ?? OPERATOR;
  const app = new Hono();

  app.use("*", async (c, next) => {
    const host = loopbackOnly ? hostRefusal(c.req.header("host")) : undefined;
    if (host) return c.json(rpcError(-32000, host), 421);
    const crossSite = crossOriginRefusal({
      secFetchSite: c.req.header("sec-fetch-site"),
      origin: c.req.header("origin"),
      host: c.req.header("host"),
    });
    if (crossSite) return c.json(rpcError(-32000, crossSite), 403);
    const principal = options.credentials
      ? options.credentials.authenticate(c.req.header("authorization"))
      : token === null || tokenMatches(c.req.header("authorization"), token)
        ? OPERATOR
        : undefined;
    if (!principal)
      return c.json(rpcError(-32001, "unauthorized: a bearer token is required"), 401, {
        "WWW-Authenticate": 'Bearer realm="idem"',
      });
    principals.set(c.req.raw, principal);
    await next();
  });

  const closeSession = async (id: string) => {
    const s = open.get(id);
    open.delete(id);
    await s?.session.server.close().catch(() => {});
  };

  app.all(MCP_PATH, async (c) => {
    const id = c.req.header("mcp-session-id");
    if (id !== undefined) {
      const s = open.get(id);
      // Another credential's session is as unknown as one that never was.
      if (!s || !same(s.principal, principalOf(c)))
        return c.json(rpcError(-32001, "Session not found"), 404);
      s.lastUsed = Date.now();
      return s.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== "POST")
      return c.json(rpcError(-32000, "Bad Request: no Mcp-Session-Id; start with initialize"), 400);
    for (const [sid, s] of open) if (Date.now() - s.lastUsed > idleMs) await closeSession(sid);
    if (open.size >= maxSessions)
      return c.json(rpcError(-32000, `too many open sessions (${maxSessions})`), 503);
    const principal = principalOf(c);
    const job = await jobOf(c, principal);
    if ("refused" in job) return c.json(rpcError(-32602, job.refused), 400);
    return start(c, job.job, principal);
  });

  /**
   * The session's job: the server's, else the one the URL names (`?job=`, `&agent=`). An agent's
   * token opens only a job the journal knows as that agent's.
   */
  async function jobOf(
    c: Context,
    principal: Principal,
  ): Promise<{ job: SessionJob | undefined } | { refused: string }> {
    const named = c.req.query("job");
    const agent = principal.operator ? c.req.query("agent") : principal.grant.agent;
    let job: SessionJob | undefined;
    if (options.job) {
      if (named !== undefined && named !== options.job.jobId)
        return { refused: `this server works on job ${options.job.jobId} only` };
      job = options.job;
    } else if (named !== undefined) {
      try {
        job = await resolveJob(context.journal, named, agent);
      } catch (e) {
        return { refused: describeError(e) };
      }
    }
    if (job && !principal.operator) {
      const row = await context.journal.jobs.get(job.jobId);
      if (row?.agent !== principal.grant.agent)
        return {
          refused: `FORBIDDEN: job ${job.jobId} is not enqueued for agent ${principal.grant.agent}, whose token this is`,
        };
    }
    return { job };
  }

  async function start(
    c: Context,
    job: SessionJob | undefined,
    principal: Principal,
  ): Promise<Response> {
    // An agent's session works within its grant, and never with the operators' tools.
    const ctx = principal.operator
      ? context
      : { ...context, grant: principal.grant, operatorTools: "off" as const };
    const session = createSessionServer(ctx, { job, finish, draft: options.draft });
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // A call carries one effect at most as large as an output may be (413 beyond).
        maxRequestBodySize: Math.max(4 * 1_048_576, 2 * context.config.limits.maxOutputBytes),
        onsessioninitialized: (sid) => {
          open.set(sid, { transport, session, lastUsed: Date.now(), principal });
        },
        // A DELETE from the client: the session ends, and a draft of its own with it.
        onsessionclosed: (sid) => closeSession(sid),
      });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) open.delete(transport.sessionId);
    };
    await session.server.connect(transport);
    const response = await transport.handleRequest(c.req.raw);
    // Not an initialize: nothing of it is kept.
    if (transport.sessionId === undefined) await session.server.close();
    return response;
  }

  return {
    app,
    sessions: () => open.size,
    async close() {
      await Promise.all([...open.keys()].map(closeSession));
    },
  };
}

/** A listening MCP endpoint. */
export interface McpHttpServer extends HttpServer {
  /** The endpoint's URL: `http://host:port/mcp`. */
  readonly endpoint: string;
  sessions(): number;
}

/**
 * Serves {@link createMcpHttpApp} on `host:port` (port 0 picks a free one). The caller refuses a
 * listen beyond loopback without a token first (`assertListenAllowed`, as `idem mcp` does).
 * @throws the listen error (EADDRINUSE) as is.
 */
export async function startMcpHttpServer(
  options: McpHttpOptions & { port: number },
): Promise<McpHttpServer> {
  const mcp = createMcpHttpApp(options);
  const http = await serveHttp(mcp.app, { host: options.host, port: options.port });
  const close = async () => {
    await mcp.close();
    await http.close();
  };
  return {
    url: http.url,
    port: http.port,
    endpoint: `${http.url}${MCP_PATH}`,
    sessions: mcp.sessions,
    close,
    [Symbol.asyncDispose]: close,
  };
}
