// Fuzzing what a hostile web page (or network peer) can send to the executor's API and the console,
// and what agent text can put on a terminal (docs/security.md), in process against the real hono
// apps and a real SQLite journal. Each property is checked against an oracle written from the
// rules in docs/security.md, not from the code under test.
import { dirname, join } from "node:path";
import { createConsole } from "@idem/console";
import { openEffects } from "@idem/core";
import { createApiApp, createExecutorMetrics } from "@idem/executor";
import { silentLogger } from "@idem/runtime";
import { parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonText, terminalText } from "../../apps/cli/src/render/terminal-text.js";
import { safeNext } from "../../apps/console/src/auth.js";

/** Host header values: loopback names in their forms, rebound names, junk. */
const hostHeader = fc.oneof(
  fc.constantFrom(
    "127.0.0.1:7070",
    "localhost:7070",
    "LOCALHOST",
    "[::1]:7070",
    "app.localhost:7070",
    "127.9.8.7",
    "localhost.",
    "evil.example:7070",
    "localhost.evil.example",
    "127.0.0.1.evil.example",
    "[::2]:7070",
    "0.0.0.0:7070",
    "",
  ),
  fc.domain(),
  fc.string({ maxLength: 30 }),
);
/** Content types: JSON in its spellings, the form types, near misses, junk. */
const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      "APPLICATION/JSON",
      "application/json;charset=UTF-8",
      "text/plain",
      "text/plain; charset=utf-8",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonx",
      "application/json-patch+json",
      "text/json",
      "application/javascript",
      " application/json",
    ),
    fc.string({ maxLength: 30 }),
  ),
  { nil: undefined },
);
const secFetchSite = fc.option(
  fc.constantFrom("same-origin", "same-site", "cross-site", "none", "SAME-ORIGIN", "bogus", ""),
  { nil: undefined },
);
const origin = fc.option(
  fc.oneof(
    fc.constantFrom(
      "null",
      "http://evil.example",
      "http://127.0.0.1:7070",
      "http://localhost:7070",
    ),
    fc.webUrl(),
    fc.string({ maxLength: 20 }),
  ),
  { nil: undefined },
);

const LOOPBACK = /^(localhost|[^:]*\.localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])\.?(:\d+)?$/i;

/** The oracle of docs/security.md: whether a browser-shaped request may reach a token-less loopback API. */
function allowed(h: {
  host: string;
  contentType: string | undefined;
  secFetchSite: string | undefined;
  origin: string | undefined;
}): boolean {
  if (h.host !== "" && !LOOPBACK.test(h.host.trim())) return false;
  const site = h.secFetchSite?.trim().toLowerCase();
  if (site) {
    if (site !== "same-origin" && site !== "none") return false;
  } else if (h.origin !== undefined && h.origin.trim() !== "") {
    let host: string | undefined;
    try {
      host = h.origin.trim() === "null" ? undefined : new URL(h.origin.trim()).host.toLowerCase();
    } catch {
      host = undefined;
    }
    if (host === undefined || host !== h.host.trim().toLowerCase()) return false;
  }
  return /^application\/json\s*(;|$)/i.test(h.contentType?.trim() ?? "");
}

function testConfig(dir: string, extra: Record<string, unknown> = {}) {
  const r = parseConfig(
    { journal: { path: join(dir, "journal.db") }, ...extra },
    { dir, file: join(dir, "idem.config.json") },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

describe("fuzzing the executor's API with browser-shaped requests", () => {
  it("records an output only when the Host, the Origin or Sec-Fetch-Site and the Content-Type allow it (1,500 requests)", async () => {
    await using t = await tempJournal({ synchronous: "OFF" });
    const app = createApiApp({
      config: testConfig(dirname(t.path)),
      journal: t.journal,
      metrics: createExecutorMetrics(),
      logger: silentLogger(),
    });
    const samples = fc.sample(fc.record({ host: hostHeader, contentType, secFetchSite, origin }), {
      numRuns: 1500,
      seed: 31,
    });
    let recorded = 0;
    for (const [n, h] of samples.entries()) {
      const headers: Record<string, string> = {};
      if (h.host !== "") headers.host = h.host;
      if (h.contentType !== undefined) headers["content-type"] = h.contentType;
      if (h.secFetchSite !== undefined) headers["sec-fetch-site"] = h.secFetchSite;
      if (h.origin !== undefined) headers.origin = h.origin;
      let r: Response;
      try {
        r = await app.request("http://127.0.0.1:7070/v1/outputs", {
          method: "POST",
          headers,
          body: JSON.stringify({ jobId: `web-${n}`, agent: "writer", effects: [] }),
        });
      } catch {
        // A header value the fetch API itself refuses never reaches the server.
        continue;
      }
      const expected = allowed(h);
      expect(r.status === 201, JSON.stringify(h)).toBe(expected);
      if (!expected) expect([403, 415, 421], JSON.stringify(h)).toContain(r.status);
      if (r.status === 201) recorded += 1;
    }
    expect((await t.journal.status()).outputs).toBe(recorded);
    expect(recorded).toBeGreaterThan(10);
  });
});

describe("fuzzing the console's sign-in and actions", () => {
  it("lets an action reach the journal only with its session's cookie and CSRF token, or the bearer token (800 requests)", async () => {
    await using t = await tempJournal({ synchronous: "OFF" });
    const config = testConfig(dirname(t.path));
    const effects = openEffects(config);
    const c = createConsole({ config, journal: t.journal, effects, actor: "fuzz", token: "t0k3n" });
    const request = async (
      path: string,
      init: { method?: string; headers?: Record<string, string>; body?: string } = {},
    ) =>
      c.app.request(`http://127.0.0.1:7071${path}`, {
        method: init.method ?? "GET",
        headers: { host: "127.0.0.1:7071", ...init.headers },
        ...(init.body !== undefined && { body: init.body }),
      });
    try {
      // Two real sessions, as a browser gets them.
      const sessions: { cookie: string; csrf: string }[] = [];
      for (let i = 0; i < 2; i++) {
        const page = await request("/sign-in");
        const nonce =
          /idem_console_sign_in=([^;]+)/.exec(page.headers.get("set-cookie") ?? "")?.[1] ?? "";
        const signedIn = await request("/sign-in", {
          method: "POST",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            cookie: `idem_console_sign_in=${nonce}`,
          },
          body: new URLSearchParams({ csrf: nonce, token: "t0k3n" }).toString(),
        });
        const cookie =
          /idem_console_session=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")?.[1] ?? "";
        const html = await (
          await request("/dead-letters", { headers: { cookie: `idem_console_session=${cookie}` } })
        ).text();
        sessions.push({ cookie, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? "" });
      }
      expect(sessions.every((s) => s.cookie !== "" && s.csrf !== "")).toBe(true);
      const [a, b] = sessions as [
        { cookie: string; csrf: string },
        { cookie: string; csrf: string },
      ];
      const attempt = fc.record({
        cookie: fc.constantFrom("a", "b", "none", "junk"),
        csrf: fc.constantFrom("a", "b", "none", "junk"),
        bearer: fc.constantFrom("right", "wrong", "none"),
        site: fc.option(fc.constantFrom("same-origin", "cross-site", "same-site", "none"), {
          nil: undefined,
        }),
        origin: fc.option(fc.constantFrom("http://127.0.0.1:7071", "http://evil.example", "null"), {
          nil: undefined,
        }),
      });
      const pick = (k: string) => (k === "a" ? a : k === "b" ? b : undefined);
      for (const x of fc.sample(attempt, { numRuns: 800, seed: 16 })) {
        const headers: Record<string, string> = {
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        };
        const session = pick(x.cookie);
        if (session) headers.cookie = `idem_console_session=${session.cookie}`;
        else if (x.cookie === "junk") headers.cookie = "idem_console_session=junk";
        if (x.bearer !== "none")
          headers.authorization = `Bearer ${x.bearer === "right" ? "t0k3n" : "nope"}`;
        if (x.site !== undefined) headers["sec-fetch-site"] = x.site;
        if (x.origin !== undefined) headers.origin = x.origin;
        const csrf = pick(x.csrf)?.csrf ?? (x.csrf === "junk" ? "junk" : undefined);
        const body = new URLSearchParams({
          job: "nope",
          actor: "fuzz",
          ...(csrf && { csrf }),
        }).toString();
        const r = await request("/dead-letters/retry", { method: "POST", headers, body });
        // The oracle: a browser's cross-site request never; a script with the token always; a
        // browser session only with its own CSRF token.
        const crossSite =
          x.site !== undefined
            ? x.site !== "same-origin" && x.site !== "none"
            : x.origin !== undefined && x.origin !== "http://127.0.0.1:7071";
        const bearer = x.bearer === "right";
        const ownCsrf = session !== undefined && x.csrf === x.cookie;
        const reachesCore = !crossSite && (bearer || (x.bearer === "none" && ownCsrf));
        // Reaching core: no such job (404). Anything else is refused before it.
        expect(r.status === 404, JSON.stringify(x)).toBe(reachesCore);
      }
    } finally {
      c.close();
      await effects.close();
    }
  });

  it("goes back after sign-in only to a path of this console, whatever next= says (5,000 values)", () => {
    const base = "http://console.invalid";
    const next = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.webUrl(),
      fc
        .array(
          fc.constantFrom(
            "/",
            "\\",
            "%2f",
            "%5c",
            "%09",
            "\t",
            "\n",
            "\r",
            ".",
            "evil.example",
            "@",
            "?",
            "#",
            " ",
            "%2F%2F",
            "//",
          ),
          { maxLength: 8 },
        )
        .map((parts) => parts.join("")),
    );
    for (const value of fc.sample(next, { numRuns: 5000, seed: 10 })) {
      const out = safeNext(value);
      if (out === "/") continue;
      expect(out).toBe(value);
      // What a browser makes of it: tabs and newlines dropped, then resolved against the console.
      const seen = out.replace(/[\t\n\r]/g, "");
      expect(new URL(seen, base).origin, JSON.stringify(value)).toBe(base);
      expect(/[\u0000-\u0020\u007f-\u009f\\]/.test(out), JSON.stringify(value)).toBe(false);
      expect(out.startsWith("//"), JSON.stringify(value)).toBe(false);
    }
  });
});

describe("fuzzing agent text on a terminal", () => {
  /** Characters a terminal acts on: C0 (newline and tab aside), DEL, C1, separators, bidi controls. */
  const ACTS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
  const text = fc.oneof(
    fc.string({ unit: "binary", maxLength: 60 }),
    fc
      .array(
        fc.constantFrom(
          "\u001b[2J",
          "\u001b]52;c;ZXZpbA==\u0007",
          "\u001b]8;;http://x\u001b\\",
          "\u009b31m",
          "\u202e",
          "\r",
          "\n",
          "\t",
          "ok",
          "https://u:p@h/?k=v",
        ),
        { maxLength: 10 },
      )
      .map((p) => p.join("")),
  );

  it("escapes every character a terminal would act on, on one line or several (10,000 texts)", () => {
    for (const value of fc.sample(text, { numRuns: 10_000, seed: 8 })) {
      const line = terminalText(value);
      expect(ACTS.test(line) || /[\n\t]/.test(line), JSON.stringify(value)).toBe(false);
      const block = terminalText(value, { lines: true });
      expect(ACTS.test(block), JSON.stringify(value)).toBe(false);
      // Newlines are kept where the context is a block, no more and no fewer.
      expect(block.split("\n").length, JSON.stringify(value)).toBe(value.split("\n").length);
      expect(line).not.toContain("p@h");
    }
  });

  it("keeps the exact text in --json, with every such character a JSON escape (10,000 texts)", () => {
    for (const value of fc.sample(text, { numRuns: 10_000, seed: 9 })) {
      const json = jsonText({ summary: value, nested: [value] });
      // The document's own newlines and indentation aside, nothing a terminal acts on is raw.
      const raw = json.replace(/\n {0,4}/g, "");
      expect(ACTS.test(raw) || /[\n\t]/.test(raw), JSON.stringify(value)).toBe(false);
      expect(JSON.parse(json)).toEqual({ summary: value, nested: [value] });
    }
  });
});
