import type { Effects } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import {
  assertListenAllowed,
  type HttpServer,
  hostRefusal,
  isLoopbackHost,
  serveHttp,
  type Tracing,
} from "@idem/runtime";
import { type Config, describeError, httpStatusOfError } from "@idem/schema";
import { type Context, Hono } from "hono";
import { html } from "hono/html";
import { actionRoutes } from "./action-routes.js";
import { ActivityHistory } from "./activity.js";
import { approvalRoutes } from "./approval-routes.js";
import { CSS, FAVICON, JS } from "./assets.js";
import { actionRefusal, type Caller, createAuth, identify, safeNext, signInNonce } from "./auth.js";
import { BackgroundAudit } from "./background-audit.js";
import { type ConsoleDeps, wantsJson } from "./deps.js";
import { InterpreterWatch } from "./interpreter-watch.js";
import { page, signInPage } from "./layout.js";
import { BadRequest, readRoutes } from "./read-routes.js";
import type { Session } from "./sessions.js";
import { SharedOverview } from "./shared-overview.js";
import { signInRoutes } from "./sign-in-routes.js";

/** What the console serves and acts on. */
export interface ConsoleOptions {
  config: Config;
  /** The journal every view reads and every action writes through (@idem/core). */
  journal: JournalStore;
  /** The targets (openEffects): replay plans, resolve's probe, the audit. */
  effects: Effects;
  /** Who acts by default in the forms (a person may type another name). */
  actor: string;
  /** Hides and refuses every action; default `console.readOnly`. */
  readOnly?: boolean;
  /** Required on every page and action; default `api.token` (null: none). */
  token?: string | null;
  /**
   * Whether the Host header must name a loopback host. Default: when the console listens on
   * loopback without a token, so that a DNS-rebound name from a web page cannot drive it. With a
   * token, a rebound page has neither the token nor the cookie (bound to the real host name), and
   * a reverse proxy may pass the public Host through.
   */
  loopbackOnly?: boolean;
  tracing?: Tracing;
  /** Live pages poll every this many ms (default 3000). */
  liveMs?: number;
  /** The background audit's period; default `console.auditIntervalMs` (null: none). */
  auditIntervalMs?: number | null;
  now?: () => number;
}

/** A console app, not listening: `app.fetch` serves it; `close` stops its background audit. */
export interface Console {
  readonly app: Hono;
  close(): void;
}

/** The CSRF token of the request's session (empty without one: a bearer script needs none). */
const csrfOf = (c: Context): string =>
  (c.get("session" as never) as Session | undefined)?.csrf ?? "";

/** Paths served without a token: the stylesheet, the script and the sign-in form. */
const OPEN_PATHS = new Set([
  "/assets/console.css",
  "/assets/console.js",
  "/favicon.ico",
  "/sign-in",
]);

/**
 * The operator console as a hono app: server-rendered pages over @idem/core (the same functions
 * the CLI calls), live updates by polling, the actions of `idem dlq` and `idem replay`. With a token,
 * every page and action requires it as a bearer header or the session cookie of the sign-in form;
 * every POST is checked against cross-site requests; read-only refuses every action with 403.
 */
export function createConsole(options: ConsoleOptions): Console {
  const { config } = options;
  const now = options.now ?? Date.now;
  const auth = createAuth(options.token === undefined ? config.api.token : options.token, now);
  const readOnly = options.readOnly ?? config.console.readOnly;
  const loopbackOnly =
    options.loopbackOnly ?? (auth.token === null && isLoopbackHost(config.console.host));
  const intervalMs =
    options.auditIntervalMs === undefined
      ? config.console.auditIntervalMs
      : options.auditIntervalMs;
  const audit =
    intervalMs === null
      ? undefined
      : new BackgroundAudit({
          config,
          journal: options.journal,
          effects: options.effects,
          now,
          intervalMs,
        }).start();
  const d: ConsoleDeps = {
    config,
    journal: options.journal,
    effects: options.effects,
    actor: options.actor,
    readOnly,
    auth,
    overview: new SharedOverview(options.journal, config, new ActivityHistory(), now),
    audit: audit?.state ?? null,
    interpreters: new InterpreterWatch(
      options.journal,
      Math.max(10_000, 10 * config.interpreter.pollMs),
    ),
    ...(options.tracing && { tracing: options.tracing }),
    now,
    liveMs: options.liveMs ?? 3000,
    replays: new Map(),
    shell: (c) => ({
      journal: options.journal.location,
      readOnly,
      signedIn: c.get("caller" as never) === "cookie",
      csrf: csrfOf(c),
    }),
    csrf: csrfOf,
  };
  const app = new Hono<{ Variables: { caller: Caller; session: Session | undefined } }>();

  app.use("*", async (c, next) => {
    await next();
    c.header(
      "content-security-policy",
      "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    );
    c.header("x-content-type-options", "nosniff");
    c.header("referrer-policy", "same-origin");
    c.header("x-frame-options", "DENY");
    if (!c.res.headers.has("cache-control")) c.header("cache-control", "no-store");
  });

  app.use("*", async (c, next) => {
    if (loopbackOnly && hostRefusal(c.req.header("host")))
      return c.text("this console answers only on loopback host names (console.host)", 421);
    if (OPEN_PATHS.has(c.req.path)) return next();
    const page = c.req.method === "GET" && !wantsJson(c) && c.req.header("x-idem-fragment") !== "1";
    const { caller, session } = identify(c, auth, page);
    if (caller === null) {
      if (page)
        return signInPage(c, {
          next: safeNext(c.req.path + (new URL(c.req.url).search || "")),
          nonce: signInNonce(c),
        });
      return c.json(
        {
          error:
            "unauthorized: this console requires api.token (Authorization: Bearer, or sign in)",
        },
        401,
        {
          "www-authenticate": 'Bearer realm="idem-console"',
        },
      );
    }
    c.set("caller", caller);
    c.set("session", session);
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    // Read-only first: whatever the request carries, no action runs, and it says why.
    if (readOnly && c.req.path !== "/sign-out")
      return c.json(
        {
          error:
            "this console is read-only (console.readOnly): every action is refused; use the CLI (idem dlq, idem replay)",
        },
        403,
      );
    const form = (await c.req.parseBody({ all: true })) as Record<string, unknown>;
    const refusal = actionRefusal(c, caller, session, form);
    if (refusal) return c.json({ error: refusal }, 403);
    return next();
  });

  app.get("/assets/console.css", (c) =>
    c.body(CSS, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "max-age=300" }),
  );
  app.get("/assets/console.js", (c) =>
    c.body(JS, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "max-age=300",
    }),
  );

  app.get("/favicon.ico", (c) =>
    c.body(FAVICON, 200, { "content-type": "image/svg+xml", "cache-control": "max-age=86400" }),
  );
  signInRoutes(app as unknown as Hono, auth);
  readRoutes(app as unknown as Hono, d);
  actionRoutes(app as unknown as Hono, d);
  approvalRoutes(app as unknown as Hono, d);

  app.notFound((c) =>
    page(c, d.shell(c), {
      title: "Not found",
      path: c.req.path,
      status: 404,
      body: html`<h1>Not found</h1><p>No page at ${c.req.path}.</p>`,
    }),
  );
  app.onError((e, c) => {
    const bad = e instanceof BadRequest;
    const status = bad ? 400 : httpStatusOfError(e);
    const message = bad ? e.message : describeError(e);
    if (wantsJson(c) || c.req.method !== "GET") return c.json({ error: message }, status);
    return page(c, d.shell(c), {
      title: bad ? "Bad request" : "Error",
      path: c.req.path,
      status,
      body: html`<h1>${bad ? "Bad request" : "Error"}</h1><p class="flash err" role="alert">${message}</p>`,
    });
  });

  return { app: app as unknown as Hono, close: () => audit?.stop() };
}

/** A listening console. */
export interface RunningConsole extends AsyncDisposable {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves the console on `host:port` (default `console.host`/`console.port`; port 0 picks a free
 * one). Resolves once listening.
 * @throws INVALID_CONFIG for an address beyond loopback without a token (nothing listens); the
 * listen error (EADDRINUSE, EACCES) as is.
 */
export async function startConsole(
  options: ConsoleOptions & { host?: string; port?: number },
): Promise<RunningConsole> {
  const host = options.host ?? options.config.console.host;
  const token = options.token === undefined ? options.config.api.token : options.token;
  assertListenAllowed({ what: "the console", host, token, hostKey: "console.host" });
  const created = createConsole({
    ...options,
    loopbackOnly: options.loopbackOnly ?? (isLoopbackHost(host) && token === null),
  });
  let server: HttpServer;
  try {
    server = await serveHttp(created.app, {
      host,
      port: options.port ?? options.config.console.port,
    });
  } catch (e) {
    created.close();
    throw e;
  }
  const close = async () => {
    created.close();
    await server.close();
  };
  return { url: server.url, port: server.port, close, [Symbol.asyncDispose]: close };
}
