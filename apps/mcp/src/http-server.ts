import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { type Credentials, OPERATOR, type Principal } from "@idem/core";
import {
  crossOriginRefusal,
  type HttpServer,
  hostRefusal,
  isLoopbackHost,
  serveHttp,
} from "@idem/runtime";
import { describeError, isIdemError } from "@idem/schema";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type Context, Hono } from "hono";
import {
  type FinishMode,
  type McpContext,
  maxMessageBytes,
  type SessionJob,
} from "./mcp-context.js";
import { guardRequests } from "./request-guard.js";
import { resolveJob } from "./session-job.js";
import {
  DEFAULT_SESSION_LIMITS,
  type RegisteredSession,
  type SessionLimits,
  SessionRegistry,
} from "./session-registry.js";
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
   * agent's token one held to that agent (its own enqueued jobs, its scope, no operators' tools).
   * When given, it decides who a request is instead of `token` alone.
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
  /** How many sessions are kept, and how long an idle one (default {@link DEFAULT_SESSION_LIMITS}). */
  sessionLimits?: Partial<SessionLimits>;
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

interface OpenSession extends RegisteredSession {
  transport: WebStandardStreamableHTTPServerTransport;
  /** Who opened it: every later request of the session must be the same credential. */
  principal: Principal;
}

/** Whether two principals are the same credential. */
const same = (a: Principal, b: Principal) =>
  a.operator === b.operator && (a.operator || b.operator || a.grant.agent === b.grant.agent);

/**
 * Who a request comes from, for the per-client bound: its address and a digest of its credential
 * (never the credential itself).
 */
function clientOf(c: Context): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  const address = env?.incoming?.socket?.remoteAddress ?? "local";
  const credential = c.req.header("authorization");
  return credential === undefined
    ? address
    : `${address} ${digest(credential).toString("hex").slice(0, 12)}`;
}

/**
 * The MCP Streamable HTTP endpoint at `/mcp` (docs/mcp.md, "Over HTTP"): one stateful session per
 * `initialize` (its `Mcp-Session-Id`), bound to the job its URL names (`?job=`, `&agent=`,
 * `&attempt=`), whose draft lives in `context.drafts`, so a session may end without losing
 * anything staged: sessions are bounded and reaped as {@link SessionRegistry} says. Before
 * anything, the browser guards of the API: a cross-site request is refused (403), and on loopback
 * without a token a `Host` that is not a loopback name (421); then the bearer token when there is
 * one (401). An unknown session answers 404 (the client starts a new one, as MCP says), a request
 * without one that is not an `initialize` 400, a body over {@link maxMessageBytes} 413.
 */
export function createMcpHttpApp(options: McpHttpOptions): McpHttpApp {
  const { context, token, finish } = options;
  const loopbackOnly = token === null && isLoopbackHost(options.host);
  const open = new SessionRegistry<OpenSession>(
    { ...DEFAULT_SESSION_LIMITS, ...options.sessionLimits },
    context.logger,
  );
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

  app.all(MCP_PATH, async (c) => {
    const id = c.req.header("mcp-session-id");
    if (id !== undefined) {
      const s = open.use(id);
      // Another credential's session is as unknown as one that never was.
      if (!s || !same(s.principal, principalOf(c)))
        return c.json(rpcError(-32001, "Session not found"), 404);
      return s.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== "POST")
      return c.json(rpcError(-32000, "Bad Request: no Mcp-Session-Id; start with initialize"), 400);
    const client = clientOf(c);
    if (!(await open.makeRoom(client)))
      return c.json(rpcError(-32000, "every open session has a call in flight: try again"), 503, {
        "Retry-After": "1",
      });
    const principal = principalOf(c);
    const job = await jobOf(c, principal);
    if ("refused" in job) return c.json(rpcError(-32602, job.refused), 400);
    return start(c, job.job, client, principal);
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
    let job: SessionJob | undefined;
    if (options.job) {
      if (named !== undefined && named !== options.job.jobId)
        return { refused: `this server works on job ${options.job.jobId} only` };
      job = options.job;
    } else if (named !== undefined) {
      const agent = principal.operator ? c.req.query("agent") : principal.grant.agent;
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
    client: string,
    principal: Principal,
  ): Promise<Response> {
    const attemptId = c.req.query("attempt");
    // An agent's session works within its grant, and never with the operators' tools.
    const ctx = principal.operator
      ? context
      : { ...context, grant: principal.grant, operatorTools: "off" as const };
    let session: McpSession;
    try {
      session = await createSessionServer(ctx, { job, finish, attemptId });
    } catch (e) {
      if (isIdemError(e, "INVALID_STATE")) return c.json(rpcError(-32602, e.message), 409);
      if (isIdemError(e, "INVALID_INPUT")) return c.json(rpcError(-32602, e.message), 400);
      throw e;
    }
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        maxRequestBodySize: maxMessageBytes(context.config),
        onsessioninitialized: (sid) => {
          open.add(sid, {
            transport,
            client,
            busy: session.busy,
            close: () => session.server.close(),
            principal,
          } satisfies OpenSession);
        },
        // A DELETE from the client: the session ends (its draft stays in the store).
        onsessionclosed: (sid) => open.end(sid),
      });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) open.forget(transport.sessionId);
    };
    await session.server.connect(transport);
    guardRequests(transport);
    const response = await transport.handleRequest(c.req.raw);
    // Not an initialize: nothing of it is kept.
    if (transport.sessionId === undefined) await session.server.close();
    return response;
  }

  return {
    app,
    sessions: () => open.size,
    close: () => open.closeAll(),
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
