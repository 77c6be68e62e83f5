import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { checkResponse } from "../src/github/github-check.js";
import { githubDescription } from "../src/github/github-description.js";
import { type GitHubStandIn, startGitHubStandIn } from "../src/index.js";

const T0 = Date.parse("2026-01-05T10:00:00.250Z");
let clock = T0;
let gh: GitHubStandIn;

function call(
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
) {
  return fetch(`${gh.url}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `token ${gh.token}`, ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
}
const post = (path: string, body: unknown) =>
  call(path, { method: "POST", body: JSON.stringify(body) });
const PR = { title: "x", head: "acme:feature", base: "main", body: "marker" };

beforeEach(async () => {
  clock = T0;
  gh = await startGitHubStandIn({ now: () => clock });
  gh.createRepo({ owner: "acme", name: "app", branches: ["main", "feature"] });
});

afterEach(async () => {
  expect(gh.violations().filter((v) => v.side === "response")).toEqual([]);
  await gh.stop();
});

describe("GitHub stand-in: the crash window", () => {
  it("performs a create and then drops the connection: the retry meets 'already exists'", async () => {
    gh.dropAfterCreate();
    await expect(post("/repos/acme/app/pulls", PR)).rejects.toThrow(TypeError);
    expect(gh.creates().pull_request).toBe(1);
    expect(gh.pullRequests("acme", "app")).toHaveLength(1);
    expect(gh.requests().at(-1)).toMatchObject({ status: 0, dropped: true });
    const retry = await post("/repos/acme/app/pulls", PR);
    expect(retry.status).toBe(422);
    expect(gh.pullRequests("acme", "app")).toHaveLength(1);
  });

  it("drops only the creates a predicate picks, and an issue's retry duplicates it", async () => {
    gh.dropAfterCreate({ times: 2, match: (c) => c.kind === "issue" });
    expect((await post("/repos/acme/app/pulls", PR)).status).toBe(201);
    await expect(post("/repos/acme/app/issues", { title: "t" })).rejects.toThrow(TypeError);
    await expect(post("/repos/acme/app/issues", { title: "t" })).rejects.toThrow(TypeError);
    expect((await post("/repos/acme/app/issues", { title: "t" })).status).toBe(201);
    expect(gh.issues("acme", "app")).toHaveLength(3);
    expect(gh.creates()).toMatchObject({ issue: 3, pull_request: 1 });
  });

  it("drops before a create when asked: nothing is performed", async () => {
    gh.dropBeforeCreate({ match: (c) => c.kind === "comment" && c.number === 1 });
    gh.addIssue("acme", "app", { title: "t" });
    await expect(post("/repos/acme/app/issues/1/comments", { body: "b" })).rejects.toThrow(
      TypeError,
    );
    expect(gh.comments("acme", "app")).toEqual([]);
    expect(gh.creates().comment).toBe(0);
  });
});

describe("GitHub stand-in: rate limits", () => {
  it("refuses past the primary quota with 403 and x-ratelimit-remaining 0 until the reset", async () => {
    await using small = await startGitHubStandIn({ now: () => clock, rateLimit: { core: 2 } });
    small.createRepo({ owner: "o", name: "r" });
    const get = () =>
      fetch(`${small.url}/repos/o/r/issues`, {
        headers: { authorization: `Bearer ${small.token}` },
      });
    expect((await get()).headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await get()).headers.get("x-ratelimit-remaining")).toBe("0");
    const refused = await get();
    expect(refused.status).toBe(403);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    const reset = Number(refused.headers.get("x-ratelimit-reset"));
    expect(reset).toBe(Math.ceil((T0 + 3_600_000) / 1000));
    expect(await refused.json()).toMatchObject({
      message: expect.stringMatching(/^API rate limit exceeded/),
    });
    clock = reset * 1000;
    expect((await get()).status).toBe(200);
    expect(small.rateLimitRefusals()).toBe(1);
    expect(small.violations()).toEqual([]);
  });

  it("exhausts the quota on demand and refills it at the reset time it announced", async () => {
    gh.exhaustRateLimit({ resetInSeconds: 5 });
    const refused = await post("/repos/acme/app/pulls", PR);
    expect(refused.status).toBe(403);
    expect(Number(refused.headers.get("x-ratelimit-reset"))).toBe(Math.ceil((T0 + 5000) / 1000));
    expect(gh.creates().pull_request).toBe(0);
    clock = Number(refused.headers.get("x-ratelimit-reset")) * 1000;
    expect((await post("/repos/acme/app/pulls", PR)).status).toBe(201);
    gh.exhaustRateLimit({ resource: "search", status: 429 });
    const search = await call("/search/issues?q=x");
    expect(search.status).toBe(429);
    expect(search.headers.get("x-ratelimit-resource")).toBe("search");
    expect((await call("/repos/acme/app/issues")).status).toBe(200);
    const limits = await (await call("/rate_limit")).json();
    expect(limits).toMatchObject({ resources: { core: { limit: 5000, used: 2 } } });
  });

  it("answers a secondary limit with 429 and retry-after, for the requests it picks", async () => {
    gh.secondaryRateLimit({ status: 429, retryAfterSeconds: 7, match: (r) => r.method === "POST" });
    expect((await call("/repos/acme/app/pulls")).status).toBe(200);
    const refused = await post("/repos/acme/app/pulls", PR);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("7");
    expect(refused.headers.get("x-ratelimit-remaining")).not.toBe("0");
    expect(await refused.json()).toMatchObject({
      message: expect.stringMatching(/secondary rate limit/),
    });
    expect((await post("/repos/acme/app/pulls", PR)).status).toBe(201);
  });

  it("answers server errors on demand without performing anything", async () => {
    gh.failNext({ status: 502 });
    expect((await post("/repos/acme/app/pulls", PR)).status).toBe(502);
    expect(gh.creates().pull_request).toBe(0);
  });
});

describe("GitHub stand-in: requests checked against GitHub's description", () => {
  it("answers 422 for a body the description refuses, and records it", async () => {
    const res = await post("/repos/acme/app/pulls", { title: "x", base: "main" });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { message: string }).message).toMatch(/"head" wasn't supplied/);
    expect(gh.violations()).toMatchObject([
      {
        side: "request",
        rejected: true,
        operation: "POST /repos/{owner}/{repo}/pulls",
        status: 422,
      },
    ]);
    expect(gh.creates().pull_request).toBe(0);
    expect(() => gh.assertNoViolations()).toThrow(/head/);
  });

  it("refuses bad query values and JSON, and records what GitHub would silently ignore", async () => {
    expect((await call("/repos/acme/app/pulls?state=merged")).status).toBe(422);
    expect((await call("/repos/acme/app/issues?since=yesterday")).status).toBe(422);
    expect((await call("/repos/acme/app/issues", { method: "POST", body: "{title" })).status).toBe(
      400,
    );
    expect((await call("/repos/acme/app/issues?created_after=2026-01-01")).status).toBe(200);
    expect((await post("/repos/acme/app/issues", { title: "t", key: "k" })).status).toBe(201);
    expect(gh.violations().map((v) => [v.status, v.rejected])).toEqual([
      [422, true],
      [422, true],
      [400, true],
      [200, false],
      [201, false],
    ]);
    expect(gh.violations()[3]?.problems[0]).toMatch(/created_after/);
  });

  it("answers 401 without a token or with a wrong one, and 404 off GitHub's paths", async () => {
    const none = await fetch(`${gh.url}/user`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ message: "Requires authentication" });
    const wrong = await fetch(`${gh.url}/user`, { headers: { authorization: "Bearer nope" } });
    expect(await wrong.json()).toMatchObject({ message: "Bad credentials" });
    expect((await call("/user")).status).toBe(200);
    expect((await call("/no/such/thing")).status).toBe(404);
    expect((await call("/repos/acme/app/labels")).status).toBe(404); // GitHub's, not served
    expect(gh.violations().map((v) => v.status)).toEqual([401, 401, 404, 404]);
  });

  it("checks answers for real: a pull request without head does not match the description", () => {
    const d = githubDescription();
    const problems = checkResponse(
      d,
      "get",
      "/repos/{owner}/{repo}/pulls/{pull_number}",
      200,
      {},
      {
        number: 1,
      },
    );
    expect(problems.join("\n")).toMatch(/"head" wasn't supplied/);
    expect(checkResponse(d, "get", "/user", 418, {}, {})).toHaveLength(1);
  });
});

describe("GitHub stand-in: set-ups", () => {
  it("serves under /api/v3 as GitHub Enterprise Server does", async () => {
    await using ghes = await startGitHubStandIn({ basePath: "/api/v3" });
    ghes.createRepo({ owner: "o", name: "r" });
    expect(ghes.url).toMatch(/\/api\/v3$/);
    const res = await fetch(`${ghes.url}/repos/o/r`, {
      headers: { authorization: `Bearer ${ghes.token}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { url: string }).url).toBe(`${ghes.url}/repos/o/r`);
    expect(ghes.violations()).toEqual([]);
  });

  it("reads branches from a bare git repository, as pushed by git.commit", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-gh-standin-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const gitDir = join(dir, "app.git");
    const git = (...args: string[]) =>
      execFileSync("git", ["--git-dir", gitDir, ...args], {
        encoding: "utf8",
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "a",
          GIT_AUTHOR_EMAIL: "a@x",
          GIT_COMMITTER_NAME: "a",
          GIT_COMMITTER_EMAIL: "a@x",
        },
      }).trim();
    // A bare repository with one commit on main, as a git daemon's repo.
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", gitDir]);
    const empty = git("hash-object", "-t", "tree", "-w", "/dev/null");
    git("update-ref", "refs/heads/main", git("commit-tree", empty, "-m", "seed"));
    gh.createRepo({ owner: "acme", name: "real", gitDir });
    const pr = { title: "x", head: "work", base: "main" };
    expect((await post("/repos/acme/real/pulls", pr)).status).toBe(422);
    const main = git("rev-parse", "main");
    const commit = git("commit-tree", `${main}^{tree}`, "-p", main, "-m", "work");
    git("update-ref", "refs/heads/work", commit);
    const res = await post("/repos/acme/real/pulls", pr);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ head: { sha: commit }, base: { sha: main } });
    expect(
      (await post("/repos/acme/real/git/refs", { ref: "refs/heads/x", sha: "2".repeat(40) }))
        .status,
    ).toBe(422);
  });
});
