import type { Hono } from "hono";
import { deleteCookie } from "hono/cookie";
import {
  type ConsoleAuth,
  crossSite,
  endSession,
  SIGN_IN_COOKIE,
  safeNext,
  sameSecret,
  signInNonce,
  signInNonceMatches,
  startSession,
} from "./auth.js";
import { signInPage } from "./layout.js";

/**
 * `GET /sign-in`, `POST /sign-in` and `POST /sign-out`. Signing in with `api.token` starts a
 * server-side session (its cookie, its own CSRF token, 12 hours); signing out revokes it. Without a
 * token there is nothing to sign in to: `/sign-in` goes to the overview.
 */
export function signInRoutes(app: Hono, auth: ConsoleAuth): void {
  app.get("/sign-in", (c) => {
    if (auth.token === null) return c.redirect("/", 303);
    return signInPage(c, { next: safeNext(c.req.query("next")), nonce: signInNonce(c) });
  });
  app.post("/sign-in", async (c) => {
    if (auth.token === null) return c.redirect("/", 303);
    const form = (await c.req.parseBody({ all: true })) as Record<string, unknown>;
    const refusal =
      crossSite(c) ??
      (signInNonceMatches(c, form)
        ? undefined
        : "the sign-in form is stale or came from another site: reload the page and try again");
    if (refusal) return c.json({ error: refusal }, 403);
    const next = safeNext(form.next);
    if (!sameSecret(typeof form.token === "string" ? form.token : undefined, auth.token))
      return signInPage(c, { next, nonce: signInNonce(c), error: "wrong token" });
    startSession(c, auth);
    deleteCookie(c, SIGN_IN_COOKIE, { path: "/" });
    return c.redirect(next, 303);
  });
  // Reached only through the console's guard: a signed-in caller with its session's CSRF token.
  app.post("/sign-out", (c) => {
    endSession(c, auth);
    return c.redirect("/sign-in", 303);
  });
}
