import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";

/** The console's session cookie: HttpOnly, SameSite=Strict, set by the sign-in form. */
export const SESSION_COOKIE = "idem_console_session";

/** Who a request is, as far as the console knows: by a bearer token, a session cookie, or nobody. */
export type Caller = "bearer" | "cookie" | "open" | null;

/**
 * The console's secrets: the session value (derived from `api.token`, so it survives a restart
 * and changes with the token) and the CSRF token its forms carry. Without a token, a random
 * per-process secret still protects the forms.
 */
export interface ConsoleAuth {
  readonly token: string | null;
  /** The value of the session cookie (never the token itself). */
  readonly session: string;
  /** The CSRF token every form carries and every cookie-authenticated POST must send back. */
  readonly csrf: string;
}

export function createAuth(token: string | null): ConsoleAuth {
  const secret = token === null ? randomBytes(32) : Buffer.from(token, "utf8");
  const derive = (what: string) =>
    createHmac("sha256", secret).update(`idem-console:${what}`).digest("base64url");
  return { token, session: derive("session"), csrf: derive("csrf") };
}

/** Compares two secrets in constant time (over digests, so the length leaks nothing). */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined || given.length === 0) return false;
  const digest = (s: string) => createHmac("sha256", "idem-console").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Who sent this request: a bearer token or the session cookie when a token is set; anyone otherwise. */
export function callerOf(c: Context, auth: ConsoleAuth): Caller {
  if (auth.token === null) return "open";
  const m = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "");
  if (m && sameSecret(m[1], auth.token)) return "bearer";
  if (sameSecret(getCookie(c, SESSION_COOKIE), auth.session)) return "cookie";
  return null;
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Whether `host` is a loopback address the console may be bound to. */
export function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || host.startsWith("127.");
}

/**
 * Whether the request's Host header names a loopback host (with any port). A console bound to
 * loopback answers only those, so a DNS-rebound name from a web page cannot reach it.
 */
export function hostIsLoopback(c: Context): boolean {
  const host = c.req.header("host") ?? "";
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0];
  return name !== undefined && isLoopback(name);
}

/**
 * Why a state-changing request must be refused as cross-site, or undefined when it may go on:
 * a browser's `Sec-Fetch-Site` other than same-origin, an `Origin` other than the console's own,
 * or a form without the console's CSRF token. A bearer-token caller (a script) is not a browser
 * riding on a cookie, so only the first two checks apply to it.
 */
export function crossSiteRefusal(
  c: Context,
  auth: ConsoleAuth,
  caller: Caller,
  form: Record<string, unknown>,
): string | undefined {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin")
    return `cross-site request refused (Sec-Fetch-Site: ${site})`;
  const origin = c.req.header("origin");
  const host = c.req.header("host");
  if (origin !== undefined && origin !== "null" && host !== undefined) {
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host;
    } catch {
      originHost = undefined;
    }
    if (originHost !== host) return `cross-site request refused (Origin: ${origin})`;
  } else if (origin === "null") {
    return "cross-site request refused (Origin: null)";
  }
  if (caller === "bearer") return undefined;
  const csrf = typeof form.csrf === "string" ? form.csrf : undefined;
  if (!sameSecret(csrf, auth.csrf))
    return "the form's CSRF token is missing or stale: reload the page and try again";
  return undefined;
}

/** A safe place to go back to after signing in: a path on this console, never another site. */
export function safeNext(next: unknown): string {
  if (typeof next !== "string" || !next.startsWith("/") || next.startsWith("//")) return "/";
  if (next.includes("\\") || /[\r\n]/.test(next)) return "/";
  return next;
}
