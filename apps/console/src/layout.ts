import type { Context } from "hono";
import { html } from "hono/html";
import type { Html } from "./format.js";

/** The pages of the navigation, in order. */
const NAV = [
  ["/", "Overview"],
  ["/outputs", "Outputs"],
  ["/dead-letters", "Dead letters"],
  ["/approvals", "Approvals"],
  ["/replay", "Replay"],
  ["/audit", "Audit"],
] as const;

/** What the layout needs to know about the console and the caller. */
export interface Shell {
  journal: string;
  readOnly: boolean;
  /** Set when the caller signed in with the cookie: the page offers to sign out. */
  signedIn: boolean;
  csrf: string;
}

/** The navigation with each page's link marked current in turn (index NAV.length: none), made once. */
const NAVS = [...NAV.map((_, i) => i), NAV.length].map(
  (current) =>
    html`<nav aria-label="pages"><ul>${NAV.map(
      ([href, label], i) =>
        html`<li><a href="${href}"${i === current ? html` aria-current="page"` : ""}>${label}</a></li>`,
    )}</ul></nav>`,
);

/** The index in NAV of the page at `path` (NAV.length: none of them). */
function currentNav(path: string): number {
  const i = NAV.findIndex(([href]) => (href === "/" ? path === "/" : path.startsWith(href)));
  return i < 0 ? NAV.length : i;
}

/**
 * Answers rendered HTML. A fragment made of plain strings (every page's) is passed on as one: hono
 * would otherwise resolve it through a promise of callbacks it does not have.
 */
function send(c: Context, h: Html, status: 200): Response | Promise<Response> {
  if (h instanceof Promise || h.callbacks) return c.html(h, status);
  return c.html(h.toString(), status);
}

/** Whether the request only wants the page's main content (the live updates' polls). */
export function wantsFragment(c: Context): boolean {
  return c.req.header("x-idem-fragment") === "1";
}

/**
 * A whole page: header with the navigation, the journal's location and the read-only mark; the
 * main content, live (polled every `live` ms by the console's script) when asked. A poll of a live
 * page gets the main content only.
 */
export function page(
  c: Context,
  shell: Shell,
  options: { title: string; path: string; body: Html; live?: number; status?: number },
): Response | Promise<Response> {
  const status = (options.status ?? 200) as 200;
  if (wantsFragment(c)) return send(c, options.body, status);
  return send(
    c,
    html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · idem console</title>
<link rel="stylesheet" href="/assets/console.css">
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<script src="/assets/console.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<a class="brand" href="/">idem</a>
${NAVS[currentNav(options.path)]}
<div class="meta"><span title="journal">${shell.journal}</span>${
      shell.readOnly ? html`<span class="ro" data-testid="read-only">read-only</span>` : ""
    }<span id="live-status" aria-live="polite">${options.live ? "live" : ""}</span>${
      shell.signedIn
        ? html`<form class="inline" method="post" action="/sign-out"><input type="hidden" name="csrf" value="${shell.csrf}"><button class="secondary" type="submit">Sign out</button></form>`
        : ""
    }</div>
</header>
<main id="main" tabindex="-1"${options.live ? html` data-live="${options.live}"` : ""}>${options.body}</main>
</body>
</html>`,
    status,
  );
}

/**
 * The sign-in page: one password field for `api.token`, and the form's one-time value (`nonce`,
 * see `signInNonce`), never a session's CSRF token.
 */
export function signInPage(c: Context, options: { next: string; nonce: string; error?: string }) {
  return c.html(
    html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · idem console</title><link rel="stylesheet" href="/assets/console.css"></head>
<body><main id="main"><h1>idem console: sign in</h1>
<p>This console requires its token: <code>api.token</code> in the config file it runs with (<code>idem.config.json</code>, unless <code>--config</code> or <code>$IDEM_CONFIG</code> names another; <code>idem init</code> wrote a random one there). On that machine, <code>grep '"token"' idem.config.json</code> shows it. Scripts send it as <code>Authorization: Bearer …</code>.</p>
${options.error ? html`<p class="flash err" role="alert">${options.error}</p>` : ""}
<form class="action" method="post" action="/sign-in">
<input type="hidden" name="csrf" value="${options.nonce}"><input type="hidden" name="next" value="${options.next}">
<label>Token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<button type="submit">Sign in</button></form></main></body></html>`,
    401,
  );
}
