import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type GitHubStandIn, startGitHubStandIn } from "../src/index.js";

const T0 = Date.parse("2026-01-05T10:00:00.250Z");
let clock = T0;
let gh: GitHubStandIn;

interface Call {
  method?: string;
  body?: unknown;
  token?: string | null;
  headers?: Record<string, string>;
}

/** A request as a GitHub client makes it (token, API version, JSON). */
function call(path: string, c: Call = {}): Promise<Response> {
  const headers: Record<string, string> = {
    accept: "application/vnd.github+json",
    "x-github-api-version": "2022-11-28",
    ...(c.body === undefined ? {} : { "content-type": "application/json" }),
    ...(c.token === null ? {} : { authorization: `Bearer ${c.token ?? gh.token}` }),
    ...c.headers,
  };
  const url = path.startsWith("http") ? path : `${gh.url}${path}`;
  const init: RequestInit = { method: c.method ?? "GET", headers };
  if (c.body !== undefined) init.body = JSON.stringify(c.body);
  return fetch(url, init);
}

const post = (path: string, body: unknown) => call(path, { method: "POST", body });

/** The `rel` -> URL map of a `Link` header. */
function links(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of (res.headers.get("link") ?? "").matchAll(/<([^>]+)>; rel="(\w+)"/g))
    out[m[2] as string] = m[1] as string;
  return out;
}

beforeEach(async () => {
  clock = T0;
  gh = await startGitHubStandIn({ now: () => clock, searchLagMs: 20_000 });
  gh.createRepo({ owner: "acme", name: "app", branches: ["main", "feature"] });
});

afterEach(async () => {
  // Whatever a test asked, the stand-in's own answers must match GitHub's description.
  expect(gh.violations().filter((v) => v.side === "response")).toEqual([]);
  await gh.stop();
});

describe("GitHub stand-in: pull requests", () => {
  it("creates a pull request that GitHub's description accepts, with rate-limit headers", async () => {
    const res = await post("/repos/acme/app/pulls", {
      title: "Add feature",
      head: "acme:feature",
      base: "main",
      body: "done <!-- idem:key -->",
    });
    expect(res.status).toBe(201);
    const pr = (await res.json()) as { number: number; head: { ref: string }; url: string };
    expect(pr.number).toBe(1);
    expect(pr.head.ref).toBe("feature");
    expect(res.headers.get("location")).toBe(pr.url);
    expect(res.headers.get("x-ratelimit-limit")).toBe("5000");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4999");
    expect((await call("/repos/acme/app/pulls/1")).status).toBe(200);
    expect(gh.pullRequests("acme", "app")).toMatchObject([{ number: 1, head: "feature" }]);
    expect(gh.creates().pull_request).toBe(1);
    gh.assertNoViolations();
  });

  it("answers 422 'A pull request already exists' for a second open one with the same head and base", async () => {
    const pr = { title: "x", head: "feature", base: "main" };
    expect((await post("/repos/acme/app/pulls", pr)).status).toBe(201);
    const again = await post("/repos/acme/app/pulls", pr);
    expect(again.status).toBe(422);
    expect(await again.json()).toMatchObject({
      message: "Validation Failed",
      errors: [
        {
          resource: "PullRequest",
          code: "custom",
          message: "A pull request already exists for acme:feature.",
        },
      ],
    });
    gh.setState("acme", "app", 1, "closed");
    expect((await post("/repos/acme/app/pulls", pr)).status).toBe(201);
    expect(gh.creates().pull_request).toBe(2);
  });

  it("refuses a head branch that does not exist, until a ref creates it", async () => {
    const pr = { title: "x", head: "acme:later", base: "main" };
    const refused = await post("/repos/acme/app/pulls", pr);
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ errors: [{ field: "head", code: "invalid" }] });
    const sha = "1".repeat(40);
    expect((await post("/repos/acme/app/git/refs", { ref: "refs/heads/later", sha })).status).toBe(
      201,
    );
    expect((await call("/repos/acme/app/git/ref/heads/later")).status).toBe(200);
    expect((await post("/repos/acme/app/git/refs", { ref: "refs/heads/later", sha })).status).toBe(
      422,
    );
    expect((await post("/repos/acme/app/pulls", pr)).status).toBe(201);
    expect(gh.creates()).toMatchObject({ ref: 1, pull_request: 1 });
  });

  it("filters by head=owner:branch with state=all, and records a head without owner as ignored", async () => {
    gh.setBranch("acme", "app", "other");
    await post("/repos/acme/app/pulls", { title: "a", head: "feature", base: "main" });
    await post("/repos/acme/app/pulls", { title: "b", head: "other", base: "main" });
    gh.setState("acme", "app", 1, "closed");
    const open = await (await call("/repos/acme/app/pulls?head=acme:feature")).json();
    expect(open).toEqual([]);
    const all = (await (
      await call("/repos/acme/app/pulls?head=acme:feature&state=all")
    ).json()) as { number: number }[];
    expect(all.map((p) => p.number)).toEqual([1]);
    const unfiltered = (await (
      await call("/repos/acme/app/pulls?head=feature&state=all")
    ).json()) as unknown[];
    expect(unfiltered).toHaveLength(2);
    expect(gh.violations()).toMatchObject([{ side: "request", rejected: false }]);
  });
});

describe("GitHub stand-in: lists", () => {
  it("paginates with GitHub's Link header, pointing at /repositories/{id}", async () => {
    const { id } = gh.createRepo({ owner: "acme", name: "big" });
    for (let i = 0; i < 65; i++) gh.addIssue("acme", "big", { title: `issue ${i}` });
    const first = await call("/repos/acme/big/issues?state=all&per_page=30");
    expect(Object.keys(links(first))).toEqual(["next", "last"]);
    expect(links(first).next).toBe(
      `${gh.url}/repositories/${id}/issues?state=all&per_page=30&page=2`,
    );
    expect(links(first).last).toMatch(/page=3$/);
    const second = await call(links(first).next as string);
    expect(Object.keys(links(second))).toEqual(["prev", "next", "last", "first"]);
    const numbers: number[] = [];
    let next: string | undefined = `/repos/acme/big/issues?state=all&per_page=30`;
    while (next) {
      const res = await call(next);
      numbers.push(...((await res.json()) as { number: number }[]).map((x) => x.number));
      next = links(res).next;
    }
    expect(numbers).toHaveLength(65);
    expect(new Set(numbers).size).toBe(65);
    expect(numbers[0]).toBe(65); // newest first by default
    const small = await call("/repos/acme/big/issues?per_page=100");
    expect(small.headers.get("link")).toBeNull();
    expect(((await small.json()) as unknown[]).length).toBe(65);
  });

  it("lists issues by creator and since, whose timestamps have whole seconds as on GitHub", async () => {
    gh.addIssue("acme", "app", { title: "theirs", user: "someone" });
    const res = await post("/repos/acme/app/issues", { title: "mine", body: "marker-1" });
    expect(res.status).toBe(201);
    const mine = (await res.json()) as { created_at: string };
    expect(mine.created_at).toBe("2026-01-05T10:00:00Z");
    const byMe = (await (
      await call(`/repos/acme/app/issues?creator=${gh.login}&state=all`)
    ).json()) as {
      title: string;
    }[];
    expect(byMe.map((i) => i.title)).toEqual(["mine"]);
    // A since with the intent's milliseconds misses what was made in the same second.
    const late = await (await call("/repos/acme/app/issues?since=2026-01-05T10:00:00.250Z")).json();
    expect(late).toEqual([]);
    const early = (await (
      await call("/repos/acme/app/issues?since=2026-01-05T10:00:00Z")
    ).json()) as unknown[];
    expect(early).toHaveLength(2);
  });

  it("creates and lists comments on a pull request through the issue comments endpoints", async () => {
    await post("/repos/acme/app/pulls", { title: "x", head: "feature", base: "main" });
    for (let i = 0; i < 3; i++) {
      clock += 1000;
      expect((await post("/repos/acme/app/issues/1/comments", { body: `c${i}` })).status).toBe(201);
    }
    const page = await call(
      "/repos/acme/app/issues/1/comments?per_page=2&since=2026-01-05T10:00:02Z",
    );
    expect(((await page.json()) as { body: string }[]).map((c) => c.body)).toEqual(["c1", "c2"]);
    expect(links(page)).toEqual({});
    const paged = await call("/repos/acme/app/issues/1/comments?per_page=2");
    expect(links(paged).next).toMatch(/per_page=2&page=2$/);
    expect((await post("/repos/acme/app/issues/9/comments", { body: "x" })).status).toBe(404);
    expect(gh.comments("acme", "app", 1)).toHaveLength(3);
    expect(gh.creates().comment).toBe(3);
  });
});

describe("GitHub stand-in: search", () => {
  it("finds a new issue only after the index's lag", async () => {
    await post("/repos/acme/app/issues", { title: "t", body: "key-5f3a" });
    const search = () => call("/search/issues?q=key-5f3a+repo:acme/app+is:issue");
    expect(await (await search()).json()).toMatchObject({ total_count: 0, items: [] });
    expect((await call("/repos/acme/app/issues?state=all")).status).toBe(200);
    clock += 20_000;
    const found = await (await search()).json();
    expect(found).toMatchObject({ total_count: 1, items: [{ number: 1, score: 1 }] });
    const res = await search();
    expect(res.headers.get("x-ratelimit-resource")).toBe("search");
    expect(res.headers.get("x-ratelimit-limit")).toBe("30");
  });
});
