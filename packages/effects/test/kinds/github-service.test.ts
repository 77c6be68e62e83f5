// The github.* kinds against GitHub as it really behaves (the stand-in's models, each cited in
// packages/testing/README.md): bot logins, tokens that expire or rotate, GitHub App installation
// tokens, read-after-write lag on the lists, push-to-pull-request lag, rate limits and the limits
// on content creation. Each of these ended in a duplicate or a dead run before.
import { DEFAULT_KIND_LIMITS, markedKeys } from "@idem/kit";
import { IdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { GitHubOptionsSchema } from "../../src/kinds/github/github-options.js";
import { githubIssueKind } from "../../src/kinds/github-issue/github-issue-kind.js";
import { githubPullRequestKind } from "../../src/kinds/github-pull-request/github-pull-request-kind.js";
import { type GitHubFixture, githubFixture, TOKEN_ENV } from "./github-fixture.js";
import { expectIdemError, interpret, rejection } from "./kind-calls.js";

const issue = (title = "Flaky test") => ({ kind: "github.issue", repo: "app", title });

let fx: GitHubFixture | undefined;
afterEach(async () => {
  fx?.gh.assertNoViolations();
  await fx?.[Symbol.asyncDispose]();
  fx = undefined;
});

/** The kind's options for the GitHub App `my-app`, its key in the environment. */
function asApp(f: GitHubFixture, extra: Record<string, unknown> = {}) {
  const app = f.gh.createApp({ slug: "my-app" });
  f.env.APP_KEY = app.privateKey;
  return {
    app,
    options: {
      app: { appId: app.appId, installationId: app.installationId, privateKeyEnv: "APP_KEY" },
      ...extra,
    },
  };
}

/** An installation token of `my-app`, minted as another tool would, for `tokenEnv`. */
async function installationToken(f: GitHubFixture): Promise<string> {
  const { app } = asApp(f);
  const { createAppAuth } = await import("@octokit/auth-app");
  const { request } = await import("@octokit/request");
  const auth = createAppAuth({
    appId: app.appId,
    privateKey: app.privateKey,
    installationId: app.installationId,
    request: request.defaults({ baseUrl: f.gh.url }),
  });
  return (await auth({ type: "installation" })).token;
}

describe("the github.* kinds' login", () => {
  it("refuses a configured login the token is not, before anything is made", async () => {
    fx = await githubFixture();
    const k = fx.open(githubIssueKind, { login: "someone-else" });
    const e = await rejection(interpret(k, k.check(issue()), "job-1/0", fx.clock.now()));
    expectIdemError(e, "INVALID_CONFIG");
    expect((e as Error).message).toContain(fx.gh.login);
    expect(fx.gh.creates().issue).toBe(0);
  });

  it("never makes a second item under a wrong bot login, even after a lost answer", async () => {
    fx = await githubFixture();
    fx.env[TOKEN_ENV] = await installationToken(fx);
    // `my-app` instead of `my-app[bot]`: GET /user cannot tell (403), so it is checked on GitHub's
    // own answers. The first create's answer is lost; the retry's probe sees the item its key is
    // on, made by the App's bot: INVALID_CONFIG, and no second issue.
    const k = fx.open(githubIssueKind, { login: "my-app" });
    const s = k.check(issue());
    const since = fx.clock.now();
    fx.gh.dropAfterCreate({ match: (c) => c.kind === "issue" });
    expectIdemError(await rejection(interpret(k, s, "job-1/0", since)), "UNAVAILABLE");
    const e = await rejection(interpret(k, s, "job-1/0", since));
    expectIdemError(e, "INVALID_CONFIG");
    expect((e as Error).message).toContain("my-app[bot]");
    // Nothing else is made in this process either.
    expectIdemError(await rejection(interpret(k, s, "job-2/0", since)), "INVALID_CONFIG");
    expect(fx.gh.issues("acme", "app")).toHaveLength(1);
    // With the login mended, the retry finds the one issue.
    const mended = fx.open(githubIssueKind, { login: "my-app[bot]" });
    expect((await interpret(mended, s, "job-1/0", since)).outcome).toBe("present");
    expect(fx.gh.issues("acme", "app")).toHaveLength(1);
  });

  it("checks an unchecked login against the author of the first item it makes", async () => {
    fx = await githubFixture();
    fx.env[TOKEN_ENV] = await installationToken(fx);
    const k = fx.open(githubIssueKind, { login: "my-app" });
    const e = await rejection(interpret(k, k.check(issue()), "job-1/0", fx.clock.now()));
    expectIdemError(e, "INVALID_CONFIG");
    expect(fx.gh.issues("acme", "app")).toHaveLength(1);
  });
});

describe("the github.* kinds' credentials", () => {
  it("reads the token's variable again when GitHub refuses the token (a rotated secret)", async () => {
    fx = await githubFixture();
    const k = fx.open(githubIssueKind);
    await interpret(k, k.check(issue("a")), "job-1/0", fx.clock.now());
    // The secret is rotated while the process runs: the old token revoked, the variable holds
    // the new one.
    fx.gh.revokeToken(fx.env[TOKEN_ENV] as string);
    fx.env[TOKEN_ENV] = fx.gh.addToken();
    expect((await interpret(k, k.check(issue("b")), "job-2/0", fx.clock.now())).outcome).toBe(
      "applied",
    );
    expect(fx.gh.issues("acme", "app")).toHaveLength(2);
  });

  it("as a GitHub App: mints its installation token, names its bot, and mints again before the hour ends", async () => {
    fx = await githubFixture();
    const { options } = asApp(fx);
    const k = fx.open(githubIssueKind, options);
    const first = await interpret(k, k.check(issue("a")), "job-1/0", fx.clock.now());
    expect(first.outcome).toBe("applied");
    expect(fx.gh.issues("acme", "app")[0]?.user).toBe("my-app[bot]");
    fx.clock.advance(58 * 60_000);
    const second = await interpret(k, k.check(issue("b")), "job-2/0", fx.clock.now());
    expect(second.outcome).toBe("applied");
    // Minted again before the first one's hour was out: GitHub never had to refuse one.
    expect(fx.gh.installationTokensMinted()).toBe(2);
    expect(fx.gh.expiredTokenRefusals()).toBe(0);
    // A token GitHub revokes early is minted again on its 401.
    fx.gh.revokeToken(fx.gh.installationTokens().at(-1) as string);
    expect((await interpret(k, k.check(issue("c")), "job-3/0", fx.clock.now())).outcome).toBe(
      "applied",
    );
    expect(fx.gh.installationTokensMinted()).toBe(3);
  });

  it("refuses a configured login that is not the App's bot", async () => {
    fx = await githubFixture();
    const { options } = asApp(fx, { login: "my-app" });
    const k = fx.open(githubIssueKind, options);
    const e = await rejection(interpret(k, k.check(issue()), "job-1/0", fx.clock.now()));
    expectIdemError(e, "INVALID_CONFIG");
    expect((e as Error).message).toContain("my-app[bot]");
    expect(fx.gh.creates().issue).toBe(0);
  });
});

describe("the github.* kinds against GitHub's lags", () => {
  it("waits out the lists' lag after a create whose answer was lost: one issue", async () => {
    fx = await githubFixture({ listLagMs: 3000 });
    const k = fx.open(githubIssueKind);
    const s = k.check(issue());
    const since = fx.clock.now();
    fx.gh.dropAfterCreate({ match: (c) => c.kind === "issue" });
    expectIdemError(await rejection(interpret(k, s, "job-1/0", since)), "UNAVAILABLE");
    expect((await interpret(k, s, "job-1/0", since)).outcome).toBe("present");
    expect(fx.gh.issues("acme", "app")).toHaveLength(1);
  });

  it("opens a pull request whose head was pushed a moment ago (push-to-pull-request lag)", async () => {
    fx = await githubFixture({ pushLagMs: 4000 });
    fx.gh.setBranch("acme", "app", "fresh");
    const k = fx.open(githubPullRequestKind);
    const s = k.check({ kind: "github.pull_request", repo: "app", title: "t", head: "fresh" });
    expect((await interpret(k, s, "job-1/0", fx.clock.now())).outcome).toBe("applied");
    expect(fx.gh.pullRequests("acme", "app")).toHaveLength(1);
  });
});

describe("the github.* kinds and rate limits", () => {
  it("waits a secondary limit's retry-after and a primary limit's reset instead of failing", async () => {
    fx = await githubFixture();
    const k = fx.open(githubIssueKind);
    const since = fx.clock.now();
    fx.gh.secondaryRateLimit({ retryAfterSeconds: 30, match: (r) => r.method === "POST" });
    expect((await interpret(k, k.check(issue("a")), "job-1/0", since)).outcome).toBe("applied");
    const waitedBefore = fx.clock.skipped;
    expect(waitedBefore).toBeGreaterThanOrEqual(30_000);
    const exhaustedAt = fx.clock.now();
    fx.gh.exhaustRateLimit({ resetInSeconds: 120 });
    expect((await interpret(k, k.check(issue("b")), "job-2/0", since)).outcome).toBe("applied");
    expect(fx.gh.rateLimitRefusals()).toBe(2);
    // The reset is in whole seconds, and real time ran on meanwhile (a busy machine): the clock
    // stands at or past it, however much of it was waited and however much ran.
    expect(fx.clock.now() - exhaustedAt).toBeGreaterThanOrEqual(119_000);
    expect(fx.clock.skipped - waitedBefore).toBeGreaterThan(0);
  });

  it("paces creates as GitHub asks: 85 issues, none refused by the limits on content creation", async () => {
    fx = await githubFixture();
    const k = fx.open(githubIssueKind);
    const since = fx.clock.now();
    for (let i = 0; i < 85; i++) await interpret(k, k.check(issue(`t${i}`)), `job-${i}/0`, since);
    expect(fx.gh.contentRateLimitRefusals()).toBe(0);
    expect(fx.gh.issues("acme", "app")).toHaveLength(85);
    const keys = fx.gh.issues("acme", "app").flatMap((i) => markedKeys(i.body));
    expect(new Set(keys).size).toBe(85);
    // 85 creates a second apart, and the 81st a minute after the first.
    expect(fx.clock.now() - since).toBeGreaterThanOrEqual(84_000);
  });
});

describe("idem doctor's check of the github section", () => {
  async function doctor(f: GitHubFixture, extra: Record<string, unknown>, network = true) {
    const check = githubIssueKind.doctor;
    if (!check) throw new Error("github.issue has a doctor check");
    return check({
      options: GitHubOptionsSchema.parse({ ...f.options, ...extra }),
      limits: DEFAULT_KIND_LIMITS,
      checking: () => {},
      env(variable) {
        const v = f.env[variable];
        if (v === undefined) throw new IdemError("INVALID_CONFIG", `${variable} is not set`);
        return v;
      },
      fetch: globalThis.fetch,
      clock: f.clock,
      timeoutMs: 5000,
      network,
    });
  }

  it("finds a login the token is not, a login that names no bot, and a repository that does not answer", async () => {
    fx = await githubFixture();
    expect(await doctor(fx, {})).toEqual([]);
    expect(await doctor(fx, { login: "someone-else" })).toMatchObject([
      { severity: "violation", key: "github.login" },
    ]);
    const missing = await doctor(fx, {
      repos: { app: { owner: "acme", name: "app" }, gone: { owner: "acme", name: "gone" } },
    });
    expect(missing).toMatchObject([{ severity: "violation", key: "github.repos.gone" }]);
    fx.env[TOKEN_ENV] = await installationToken(fx);
    expect(await doctor(fx, { login: "my-app" })).toMatchObject([
      { severity: "violation", key: "github.login" },
    ]);
    expect(await doctor(fx, { login: "my-app[bot]" })).toMatchObject([
      { severity: "warning", key: "github.login" },
    ]);
    fx.env[TOKEN_ENV] = undefined;
    expect(await doctor(fx, {}, false)).toMatchObject([{ severity: "warning", key: "github" }]);
    expect(await doctor(fx, {})).toMatchObject([{ severity: "violation", key: "github" }]);
  });

  it("names a GitHub App's bot itself, and finds a login that is not it", async () => {
    fx = await githubFixture();
    const { options } = asApp(fx);
    expect(await doctor(fx, options)).toEqual([]);
    expect(await doctor(fx, { ...options, login: "my-app" })).toMatchObject([
      { severity: "violation", key: "github.login" },
    ]);
  });
});
