import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { crossOriginRefusal } from "@idem/runtime";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { ConsoleSessions, SESSION_TTL_MS, type Session } from "./sessions.js";

/** The console's session cookie: HttpOnly, SameSite=Strict, 12 hours (SESSION_TTL_MS). */
export const SESSION_COOKIE = "idem_console_session";
/** The sign-in form's own one-time value (double submit), before there is any session. */
export const SIGN_IN_COOKIE = "idem_console_sign_in";
/** How long a sign-in form may wait for its token. */
const SIGN_IN_TTL_S = 30 * 60;

/** Who a request is, as far as the console knows: by a bearer token, a session cookie, or nobody. */
export type Caller = "bearer" | "cookie" | "open" | null;

/** The console's secrets: `api.token` (null: none) and its server-side sessions. */
export interface ConsoleAuth {
  readonly token: string | null;
  readonly sessions: ConsoleSessions;
}

export function createAuth(token: string | null, now: () => number): ConsoleAuth {
  return { token, sessions: new ConsoleSessions(now) };
}

/** Compares two secrets in constant time (over digests, so the length leaks nothing). */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined || given.length === 0) return false;
  const digest = (s: string) => createHmac("sha256", "idem-console").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

const cookieOptions = (maxAgeS: number) =>
  ({ httpOnly: true, sameSite: "Strict", path: "/", maxAge: maxAgeS }) as const;

/** Starts a session for this browser: its cookie is set on the answer. */
export function startSession(c: Context, auth: ConsoleAuth): Session {
  const { id, session } = auth.sessions.create();
  setCookie(c, SESSION_COOKIE, id, cookieOptions(Math.floor(SESSION_TTL_MS / 1000)));
  return session;
}

/** Signs this browser out: its session is revoked server-side and its cookie cleared. */
export function endSession(c: Context, auth: ConsoleAuth): void {
  auth.sessions.revoke(getCookie(c, SESSION_COOKIE));
  deleteCookie(c, SESSION_COOKIE, { path: "/" });
}

/**
 * Who sent this request, and its session. With a token: a bearer token (a script, no session) or
 * a live session cookie (a person who signed in), else nobody. Without a token everyone is let in
 * ("open"), and a browser asking for a page (`page`: an HTML page, which may hold forms) without a
 * session gets one here, so that its forms carry a CSRF token of its own; a script's JSON reads
 * and the live polls make none.
 */
export function identify(
  c: Context,
  auth: ConsoleAuth,
  page: boolean,
): { caller: Caller; session?: Session } {
  const live = auth.sessions.get(getCookie(c, SESSION_COOKIE));
  if (auth.token === null) {
    const session = live ?? (page ? startSession(c, auth) : undefined);
    return session ? { caller: "open", session } : { caller: "open" };
  }
  const m = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "");
  // A wrong token is refused, whatever cookie comes with it: a credential given is the one judged.
  if (m) return sameSecret(m[1], auth.token) ? { caller: "bearer" } : { caller: null };
  if (live) return { caller: "cookie", session: live };
  return { caller: null };
}

/**
 * The sign-in form's value, kept in a cookie of this browser and returned for the form (the
 * double-submit pattern): a page of another site can neither read it nor set it, so it cannot
 * sign a browser in. One per browser until sign-in (the favicon's request, answered with the
 * sign-in page too, must not replace the form's). It is no session's CSRF token: none is given
 * before the token is.
 */
export function signInNonce(c: Context): string {
  const kept = getCookie(c, SIGN_IN_COOKIE);
  const nonce =
    kept && /^[A-Za-z0-9_-]{43}$/.test(kept) ? kept : randomBytes(32).toString("base64url");
  setCookie(c, SIGN_IN_COOKIE, nonce, cookieOptions(SIGN_IN_TTL_S));
  return nonce;
}

/** Whether a sign-in form sent back the value its cookie holds. */
export function signInNonceMatches(c: Context, form: Record<string, unknown>): boolean {
  const cookie = getCookie(c, SIGN_IN_COOKIE);
  const given = typeof form.csrf === "string" ? form.csrf : undefined;
  return cookie !== undefined && sameSecret(given, cookie);
}

/** Why a browser's request is refused as cross-site (@idem/core's rule), or undefined. */
export function crossSite(c: Context): string | undefined {
  return crossOriginRefusal({
    secFetchSite: c.req.header("sec-fetch-site"),
    origin: c.req.header("origin"),
    host: c.req.header("host"),
  });
}

/**
 * Why a state-changing request must be refused, or undefined when it may go on: a browser's
 * cross-site request, or a form without its session's CSRF token. A bearer-token caller (a script)
 * is not a browser riding on a cookie, so only the first check applies to it.
 */
export function actionRefusal(
  c: Context,
  caller: Caller,
  session: Session | undefined,
  form: Record<string, unknown>,
): string | undefined {
  const refusal = crossSite(c);
  if (refusal || caller === "bearer") return refusal;
  const csrf = typeof form.csrf === "string" ? form.csrf : undefined;
  if (session === undefined || !sameSecret(csrf, session.csrf))
    return "the form's CSRF token is missing or stale: reload the page and try again";
  return undefined;
}

/**
 * A safe place to go back to after signing in: an absolute path on this console, never another
 * site. Anything else is `/`: `//host` and `/\host` (a browser reads both as another host), any
 * control character or space (a browser drops TAB, CR and LF from a URL, so `/\t/evil.example`
 * becomes `//evil.example`), a backslash, and the same in percent-encoded form (`/%09/`, `/%2F/`,
 * `/%5C`). Never throws.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== "string" || next.length > 2048) return "/";
  let decoded: string;
  try {
    decoded = decodeURIComponent(next);
  } catch {
    return "/";
  }
  // The raw value whole; of the decoded one, the path (a query may hold an encoded space).
  const decodedPath = decoded.split(/[?#]/, 1)[0] as string;
  for (const s of [next, decodedPath]) {
    if (!s.startsWith("/") || s.startsWith("//")) return "/";
    if (/[\u0000-\u0020\u007f-\u009f\\]/.test(s)) return "/";
  }
  // What a browser would make of it, resolved against this console: still this console.
  const base = "http://console.invalid";
  try {
    if (new URL(next, base).origin !== base) return "/";
  } catch {
    return "/";
  }
  return next;
}
