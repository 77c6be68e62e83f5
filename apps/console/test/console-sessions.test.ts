// The console's sessions and sign-in (issue 31, findings 7, 10 and 16): a CSRF token per session
// and never given before sign-in, sessions that expire and that sign-out revokes, the way back
// after sign-in kept on this console, and no console beyond loopback without a token.
import { dirname, join } from "node:path";
import { openEffects } from "@idem/core";
import { isIdemError, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { safeNext } from "../src/auth.js";
import { createConsole, startConsole } from "../src/index.js";
import { SESSION_TTL_MS } from "../src/sessions.js";

const TOKEN = "t0ken-for-the-console";
const FORM = { "content-type": "application/x-www-form-urlencoded" };

type Request = (
  path: string,
  init?: { method?: string; headers?: Record<string, string>; body?: string },
) => Promise<Response>;

async function withConsole(
  token: string | null,
  fn: (request: Request, clock: { advance(ms: number): void }) => Promise<void>,
) {
  await using t = await tempJournal();
  const parsed = parseConfig(
    { journal: { path: t.path } },
    { dir: dirname(t.path), file: join(dirname(t.path), "idem.config.json") },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  let now = 1_800_000_000_000;
  const effects = openEffects(parsed.config);
  const c = createConsole({
    config: parsed.config,
    journal: t.journal,
    effects,
    actor: "session-test",
    token,
    now: () => now,
  });
  try {
    await fn(
      async (path, init = {}) =>
        c.app.request(`http://127.0.0.1:7071${path}`, {
          method: init.method ?? "GET",
          headers: { host: "127.0.0.1:7071", ...init.headers },
          ...(init.body !== undefined && { body: init.body }),
        }),
      { advance: (ms) => (now += ms) },
    );
  } finally {
    c.close();
    await effects.close();
  }
}

/** The value a response sets for a cookie, or undefined. */
const setCookie = (r: Response, name: string): string | undefined =>
  r.headers
    .getSetCookie()
    .map((h) => new RegExp(`^${name}=([^;]*)`).exec(h)?.[1])
    .find((v) => v !== undefined && v !== "");
/** Every hidden csrf field's value on a page. */
const csrfFields = (html: string) =>
  [...html.matchAll(/name="csrf" value="([^"]*)"/g)].map((m) => m[1] as string);

/** Signs in through the form as a browser does: answers the session cookie. */
async function signIn(request: Request): Promise<string> {
  const page = await request("/sign-in");
  const nonce = setCookie(page, "idem_console_sign_in") as string;
  const [field] = csrfFields(await page.text());
  const r = await request("/sign-in", {
    method: "POST",
    headers: { ...FORM, cookie: `idem_console_sign_in=${nonce}`, origin: "http://127.0.0.1:7071" },
    body: new URLSearchParams({
      csrf: field ?? "",
      token: TOKEN,
      next: "/dead-letters",
    }).toString(),
  });
  expect(r.status).toBe(303);
  expect(r.headers.get("location")).toBe("/dead-letters");
  return setCookie(r, "idem_console_session") as string;
}

/** The CSRF token of the signed-in session's forms. */
async function csrfOf(request: Request, session: string): Promise<string> {
  const html = await (
    await request("/dead-letters", { headers: { cookie: `idem_console_session=${session}` } })
  ).text();
  const [csrf] = csrfFields(html);
  return csrf as string;
}

const signOut = (request: Request, session: string, csrf: string) =>
  request("/sign-out", {
    method: "POST",
    headers: { ...FORM, cookie: `idem_console_session=${session}` },
    body: new URLSearchParams({ csrf }).toString(),
  });

describe("console sessions", () => {
  it("gives each session its own CSRF token, and none to a visitor who has not signed in", async () => {
    await withConsole(TOKEN, async (request) => {
      const signInPage = await (await request("/dead-letters")).text();
      const [before] = csrfFields(signInPage);
      const a = await signIn(request);
      const b = await signIn(request);
      expect(a).not.toBe(b);
      const csrfA = await csrfOf(request, a);
      const csrfB = await csrfOf(request, b);
      expect(csrfA).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(new Set([before, csrfA, csrfB]).size).toBe(3);
      // The session's own token is what its forms must send back; another's is refused.
      const retry = (session: string, csrf: string) =>
        request("/dead-letters/retry", {
          method: "POST",
          headers: {
            ...FORM,
            cookie: `idem_console_session=${session}`,
            accept: "application/json",
          },
          body: new URLSearchParams({ csrf, job: "nope", actor: "a" }).toString(),
        });
      expect((await retry(a, csrfB)).status).toBe(403);
      expect((await retry(a, before as string)).status).toBe(403);
      expect((await retry(a, csrfA)).status).toBe(404); // reached core: no such job
    });
  });

  it("ends a session 12 hours after sign-in, and at once when it signs out", async () => {
    await withConsole(TOKEN, async (request, clock) => {
      const page = (session: string) =>
        request("/?format=json", { headers: { cookie: `idem_console_session=${session}` } });
      const a = await signIn(request);
      const b = await signIn(request);
      expect((await page(a)).status).toBe(200);
      const out = await signOut(request, a, await csrfOf(request, a));
      expect(out.status).toBe(303);
      // Revoked server-side: the cookie a copy kept opens nothing.
      expect((await page(a)).status).toBe(401);
      expect((await page(b)).status).toBe(200);
      clock.advance(SESSION_TTL_MS - 1000);
      expect((await page(b)).status).toBe(200);
      clock.advance(2000);
      expect((await page(b)).status).toBe(401);
      expect(SESSION_TTL_MS).toBe(12 * 60 * 60 * 1000);
    });
  });

  it("sets the session cookie HttpOnly, SameSite=Strict, with the session's Max-Age", async () => {
    await withConsole(TOKEN, async (request) => {
      const page = await request("/sign-in");
      const nonce = setCookie(page, "idem_console_sign_in") as string;
      const r = await request("/sign-in", {
        method: "POST",
        headers: { ...FORM, cookie: `idem_console_sign_in=${nonce}` },
        body: new URLSearchParams({ csrf: nonce, token: TOKEN }).toString(),
      });
      const header = r.headers.getSetCookie().find((h) => h.startsWith("idem_console_session="));
      expect(header).toMatch(/HttpOnly/);
      expect(header).toMatch(/SameSite=Strict/);
      expect(header).toMatch(/Max-Age=43200/);
      expect(header).not.toContain(TOKEN);
    });
  });

  it("refuses a sign-in form that did not come from its own page", async () => {
    await withConsole(TOKEN, async (request) => {
      const body = new URLSearchParams({ csrf: "guess", token: TOKEN }).toString();
      const noCookie = await request("/sign-in", { method: "POST", headers: FORM, body });
      expect(noCookie.status).toBe(403);
      const nonce = setCookie(await request("/sign-in"), "idem_console_sign_in") as string;
      const crossSite = await request("/sign-in", {
        method: "POST",
        headers: {
          ...FORM,
          cookie: `idem_console_sign_in=${nonce}`,
          "sec-fetch-site": "cross-site",
        },
        body: new URLSearchParams({ csrf: nonce, token: TOKEN }).toString(),
      });
      expect(crossSite.status).toBe(403);
      expect(setCookie(crossSite, "idem_console_session")).toBeUndefined();
    });
  });

  it("gives a token-less console's visitors a session each, with its own CSRF token", async () => {
    await withConsole(null, async (request) => {
      const first = await request("/dead-letters");
      const second = await request("/dead-letters");
      const a = setCookie(first, "idem_console_session");
      const b = setCookie(second, "idem_console_session");
      expect(a).toBeDefined();
      expect(a).not.toBe(b);
      // A visitor with a session keeps it; a script's JSON read makes none.
      const again = await request("/", { headers: { cookie: `idem_console_session=${a}` } });
      expect(setCookie(again, "idem_console_session")).toBeUndefined();
      const json = await request("/?format=json");
      expect(json.status).toBe(200);
      expect(setCookie(json, "idem_console_session")).toBeUndefined();
    });
  });
});

describe("the way back after sign-in", () => {
  it("is a path on this console, never another site, however it is written", () => {
    for (const ok of ["/", "/outputs?agent=a", "/replay?reason=a%20b", "/outputs/job-1"])
      expect(safeNext(ok), ok).toBe(ok);
    for (const bad of [
      "//evil.example/",
      "https://evil.example/",
      "/\\evil.example",
      "/\t/evil.example",
      "/%09/evil.example",
      "/%2F/evil.example",
      "/%2f%2fevil.example",
      "/%5Cevil.example",
      "/\r\n/evil.example",
      "/%0d%0a/evil.example",
      " /outputs",
      "\t//evil.example",
      "/\u0000/evil.example",
      "/%",
      "outputs",
      "",
      undefined,
      3,
    ])
      expect(safeNext(bad), JSON.stringify(bad)).toBe("/");
  });
});

describe("a console beyond loopback", () => {
  it("refuses to start without a token, naming api.token and --host; starts with one", async () => {
    await using t = await tempJournal();
    const parsed = parseConfig(
      { journal: { path: t.path } },
      { dir: dirname(t.path), file: join(dirname(t.path), "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const effects = openEffects(parsed.config);
    try {
      const base = { config: parsed.config, journal: t.journal, effects, actor: "a", port: 0 };
      const err = await startConsole({ ...base, host: "0.0.0.0" }).catch((e: unknown) => e);
      expect(isIdemError(err, "INVALID_CONFIG")).toBe(true);
      expect((err as Error).message).toMatch(/api\.token/);
      expect((err as Error).message).toMatch(/--host/);
      await using running = await startConsole({ ...base, host: "0.0.0.0", token: TOKEN });
      expect(running.port).toBeGreaterThan(0);
    } finally {
      await effects.close();
    }
  });
});
