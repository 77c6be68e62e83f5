import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { openKind } from "@idem/kit";
import { afterEach, describe, expect, it } from "vitest";
import { nextLink } from "../../src/clients/github/github-link.js";
import { githubIssueKind } from "../../src/kinds/github-issue/github-issue-kind.js";
import { githubPullRequestKind } from "../../src/kinds/github-pull-request/github-pull-request-kind.js";
import { type GitHubFixture, githubFixture, TOKEN_ENV } from "./github-fixture.js";
import { expectIdemError, interpret, rejection } from "./kind-calls.js";

const issue = { kind: "github.issue", repo: "app", title: "Flaky test" };

let fx: GitHubFixture | undefined;
let server: Server | undefined;
afterEach(async () => {
  fx?.gh.assertNoViolations();
  await fx?.[Symbol.asyncDispose]();
  fx = undefined;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server?.closeAllConnections();
  server = undefined;
});

describe("nextLink", () => {
  it("reads rel=next from GitHub's Link header, and nothing from a malformed one", () => {
    const link =
      '<https://api.github.com/repositories/1/issues?page=1>; rel="prev", <https://api.github.com/repositories/1/issues?page=3>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last"';
    expect(nextLink(link)).toBe("https://api.github.com/repositories/1/issues?page=3");
    expect(nextLink('<https://x/a?b=1,2>; title="a, b"; rel="last next"')).toBe(
      "https://x/a?b=1,2",
    );
    expect(nextLink("<https://x/a>; rel=next")).toBe("https://x/a");
    expect(nextLink('<https://x/a>; rel="prev"')).toBeUndefined();
    expect(nextLink('https://x/a; rel="next"')).toBeUndefined();
    expect(nextLink(null)).toBeUndefined();
    expect(nextLink("")).toBeUndefined();
  });
});

describe("the github.* kinds' client", () => {
  it("past rateLimitWaitMs, fails a primary rate limit with its reset (403 or 429): transient", async () => {
    for (const status of [403, 429] as const) {
      const f = await githubFixture();
      const k = f.open(githubIssueKind, { rateLimitWaitMs: 0 });
      f.gh.exhaustRateLimit({ resetInSeconds: 30, status });
      const e = await rejection(k.probe(k.check(issue), "job-1/0", { since: f.clock.now() }));
      expectIdemError(e, "UNAVAILABLE", { min: 1000, max: 32_000 });
      expect((e as { details?: { status?: number } }).details?.status).toBe(status);
      f.gh.assertNoViolations();
      await f[Symbol.asyncDispose]();
    }
  });

  it("past rateLimitWaitMs, fails a secondary rate limit with its retry-after: transient, nothing created", async () => {
    fx = await githubFixture();
    const k = fx.open(githubIssueKind, { rateLimitWaitMs: 0 });
    const s = k.check(issue);
    const since = Date.now();
    for (const status of [403, 429] as const) {
      fx.gh.secondaryRateLimit({ status, retryAfterSeconds: 7, match: (r) => r.method === "POST" });
      fx.clock.advance(1000); // past idem's own pacing of creates (a second apart)
      const e = await rejection(interpret(k, s, "job-1/0", since));
      expectIdemError(e, "UNAVAILABLE", { min: 7000, max: 7000 });
    }
    expect(fx.gh.rateLimitRefusals()).toBe(2);
    fx.clock.advance(1000);
    expect((await interpret(k, s, "job-1/0", since)).outcome).toBe("applied");
    expect(fx.gh.issues("acme", "app")).toHaveLength(1);
  });

  it("refuses a bad token as the config's (never retried), and never shows the token", async () => {
    fx = await githubFixture();
    const k = openKind(githubIssueKind, {
      options: fx.options,
      env: { [TOKEN_ENV]: "ghp_wrongwrongwrongwrongwrongwrong0000" },
    });
    const e = await rejection(k.probe(k.check(issue), "job-1/0"));
    expectIdemError(e, "INVALID_CONFIG");
    expect(
      JSON.stringify({ m: (e as Error).message, d: (e as { details?: unknown }).details }),
    ).not.toContain("wrongwrong");
    // The stand-in counts the refused token as the request's fault: the only one.
    expect(fx.gh.violations().map((v) => v.status)).toEqual([401]);
    const unset = openKind(githubIssueKind, { options: fx.options, env: {} });
    const e2 = await rejection(unset.probe(unset.check(issue), "job-1/0"));
    expectIdemError(e2, "INVALID_CONFIG");
    expect((e2 as Error).message).toContain(TOKEN_ENV);
    await k.close();
    await fx[Symbol.asyncDispose]();
    fx = undefined;
  });

  it("never follows a next page outside the configured base URL (the token goes nowhere else)", async () => {
    const seen: string[] = [];
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ? "token" : "no token"}`);
      const body = req.url?.startsWith("/user")
        ? { login: "idem-bot" }
        : req.url?.startsWith("/repos/acme/app/issues")
          ? []
          : {};
      res.writeHead(200, {
        "content-type": "application/json",
        ...(req.url?.startsWith("/repos/acme/app/issues")
          ? { link: '<http://127.0.0.2:1/steal?page=2>; rel="next"' }
          : {}),
      });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const k = openKind(githubIssueKind, {
      options: {
        baseUrl: `http://127.0.0.1:${port}`,
        tokenEnv: "T",
        repos: { app: { owner: "acme", name: "app" } },
      },
      env: { T: "secret-token" },
    });
    const e = await rejection(k.probe(k.check(issue), "job-1/0"));
    expectIdemError(e, "INVALID_CONFIG");
    expect(seen).toHaveLength(2);
    expect((e as Error).message).not.toContain("secret-token");
    await k.close();
  });

  it("gives up a request past timeoutMs: transient, the create's maybe said", async () => {
    server = createServer(() => {
      // never answers
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const k = openKind(githubPullRequestKind, {
      options: {
        baseUrl: `http://127.0.0.1:${port}`,
        tokenEnv: "T",
        login: "idem-bot",
        timeoutMs: 1000,
        repos: { app: { owner: "acme", name: "app" } },
      },
      env: { T: "secret-token" },
    });
    const s = k.check({
      kind: "github.pull_request",
      repo: "app",
      title: "t",
      head: "f",
      base: "main",
    });
    const e = await rejection(k.apply(s, "job-1/0", { probed: { status: "absent", detail: {} } }));
    expectIdemError(e, "UNAVAILABLE");
    expect((e as Error).message).toMatch(/timed out.*probes for it before it creates again/);
    await k.close();
  });
});
