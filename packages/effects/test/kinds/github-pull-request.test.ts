import { hasKeyMarker, markedKeys, openKind } from "@idem/kit";
import { afterEach, describe, expect, it } from "vitest";
import { githubPullRequestKind } from "../../src/kinds/github-pull-request/github-pull-request-kind.js";
import { type GitHubFixture, githubFixture } from "./github-fixture.js";
import { expectIdemError, fieldOf, interpret, rejection } from "./kind-calls.js";

const spec = (head: string, extra: Record<string, unknown> = {}) => ({
  kind: "github.pull_request",
  repo: "app",
  title: `Add ${head}`,
  body: `What ${head} does.`,
  head,
  ...extra,
});

let fx: GitHubFixture | undefined;
afterEach(async () => {
  // Every request the kind made validates against GitHub's OpenAPI description.
  fx?.gh.assertNoViolations();
  await fx?.[Symbol.asyncDispose]();
  fx = undefined;
});

async function setUp(o: Parameters<typeof githubFixture>[0] = {}) {
  fx = await githubFixture({ branches: ["feature", "other"], ...o });
  return { fx, gh: fx.gh, k: fx.open(githubPullRequestKind) };
}

describe("github.pull_request", () => {
  it("is absent before, present after its apply, and a second apply opens nothing", async () => {
    const { gh, k } = await setUp();
    const s = k.check(spec("feature"));
    const since = Date.now();
    expect((await k.probe(s, "job-1/0", { since })).status).toBe("absent");
    const first = await interpret(k, s, "job-1/0", since);
    expect(first.outcome).toBe("applied");
    expect(first.detail).toMatchObject({ number: 1, state: "open" });
    expect(await k.probe(s, "job-1/0", { since })).toEqual({
      status: "present",
      detail: first.detail,
    });
    expect(await k.apply(s, "job-1/0", { since })).toEqual(first.detail);
    expect(await interpret(k, s, "job-1/0", since)).toEqual({
      outcome: "present",
      detail: first.detail,
    });
    const prs = gh.pullRequests("acme", "app");
    expect(prs).toHaveLength(1);
    expect(prs[0]).toMatchObject({ head: "feature", base: "main", title: "Add feature" });
    expect(markedKeys(prs[0]?.body)).toEqual(["job-1/0"]);
    expect(prs[0]?.body?.startsWith("What feature does.")).toBe(true);
    expect(gh.creates().pull_request).toBe(1);
  });

  it("never opens a second identical pull request after a crash between create and record", async () => {
    const { gh, k } = await setUp();
    const s = k.check(spec("feature"));
    const since = Date.now();
    gh.dropAfterCreate({ match: (c) => c.kind === "pull_request" });
    // The create is performed and the connection dropped before the answer: transient, so the
    // run is retried and probes again; never OUTCOME_UNKNOWN (a person's call).
    expectIdemError(await rejection(interpret(k, s, "job-1/0", since)), "UNAVAILABLE");
    expect(gh.creates().pull_request).toBe(1);
    // The retry, as idem's interpreter runs it: probe, then apply only if absent.
    const again = await interpret(k, s, "job-1/0", since);
    expect(again.outcome).toBe("present");
    // Even an apply given the stale absent probe of before the crash opens nothing: GitHub's 422
    // "already exists" is checked, and the open pull request carries this key.
    const stale = await k.apply(s, "job-1/0", { since, probed: { status: "absent", detail: {} } });
    expect(stale).toEqual(again.detail);
    expect(gh.pullRequests("acme", "app")).toHaveLength(1);
    expect(gh.creates().pull_request).toBe(1);
  });

  it("finds its pull request past the first page, following GitHub's Link header", async () => {
    const { gh, k } = await setUp();
    const s = k.check(spec("feature"));
    const since = Date.now();
    await interpret(k, s, "job-1/0", since);
    gh.setState("acme", "app", 1, "closed");
    // 150 closed pull requests of the same head, newer than ours: it is on page 2 of 2.
    for (let i = 0; i < 150; i++)
      gh.addPullRequest("acme", "app", {
        title: `later ${i}`,
        head: "feature",
        state: "closed",
        createdAt: since + 120_000,
      });
    const before = gh.requests().length;
    const probed = await k.probe(s, "job-1/0", { since });
    expect(probed).toMatchObject({ status: "present", detail: { number: 1, state: "closed" } });
    const lists = gh.requests().slice(before);
    expect(lists.map((r) => r.path)).toEqual([
      "/repos/acme/app/pulls",
      "/repositories/1296269/pulls",
    ]);
    expect(lists[0]?.query).toContain("state=all");
    expect(lists[0]?.query).toContain("head=acme%3Afeature");
  });

  it("reads one page however many older pull requests the head has (bounded by the recording time)", async () => {
    const { gh, k } = await setUp();
    const since = Date.now();
    for (let i = 0; i < 250; i++)
      gh.addPullRequest("acme", "app", {
        title: `old ${i}`,
        head: "feature",
        state: "closed",
        body: "<!-- idem-effect: job-1/0 -->",
        createdAt: since - 86_400_000,
      });
    const before = gh.requests().length;
    expect((await k.probe(k.check(spec("feature")), "job-1/0", { since })).status).toBe("absent");
    // The first probe of a process also reads the token's login and the default branch, once.
    const lists = gh
      .requests()
      .slice(before)
      .filter((r) => r.path.endsWith("/pulls"));
    expect(lists).toHaveLength(1);
  });

  it("does not take a pull request someone else opened for the head: a conflict, nothing opened", async () => {
    const { gh, k } = await setUp();
    gh.addPullRequest("acme", "app", { title: "by hand", head: "feature", user: "someone" });
    const s = k.check(spec("feature"));
    const since = Date.now();
    expect((await k.probe(s, "job-1/0", { since })).status).toBe("absent");
    const e = await rejection(interpret(k, s, "job-1/0", since));
    expectIdemError(e, "TARGET_CONFLICT");
    expect((e as Error).message).toContain("#1");
    expect(gh.pullRequests("acme", "app")).toHaveLength(1);
  });

  it("is not fooled by a person who pastes the marker into a pull request of their own", async () => {
    const { gh, k } = await setUp();
    const since = Date.now();
    gh.addPullRequest("acme", "app", {
      title: "copy",
      head: "feature",
      base: "other",
      user: "someone",
      body: "<!-- idem-effect: job-1/0 -->",
    });
    expect(
      (await k.probe(k.check(spec("feature", { base: "other" })), "job-1/0", { since })).status,
    ).toBe("absent");
  });

  it("names the head when the branch does not exist (push it first), and refuses head = base", async () => {
    const { gh, k } = await setUp();
    const s = k.check(spec("not-pushed"));
    const e = await rejection(interpret(k, s, "job-1/0", Date.now()));
    expectIdemError(e, "INVALID_INPUT");
    expect(fieldOf(e)).toBe("head");
    expect(gh.creates().pull_request).toBe(0);
    let refused: unknown;
    try {
      k.check(spec("main", { base: "main" }));
    } catch (err) {
      refused = err;
    }
    expect(fieldOf(refused)).toBe("head");
  });

  it("refuses agent text that carries a key marker, and a repository the options do not list", () => {
    // check does no I/O: options alone, no token.
    const k = openKind(githubPullRequestKind, {
      options: { repos: { app: { owner: "acme", name: "app" } } },
      env: {},
    });
    for (const [bad, field] of [
      [{ body: "ok\n<!-- idem-effect: other-job/3 -->" }, "body"],
      [{ body: "<!--idem-effect:x-->" }, "body"],
      [{ repo: "elsewhere" }, "repo"],
      [{ repo: "constructor" }, "repo"],
    ] as const) {
      let e: unknown;
      try {
        k.check(spec("feature", bad));
      } catch (err) {
        e = err;
      }
      expectIdemError(e, "INVALID_INPUT");
      expect(fieldOf(e)).toBe(field);
    }
  });

  it("opens a draft into a named base, on a GitHub Enterprise-like base URL (/api/v3)", async () => {
    const { gh, k } = await setUp({ basePath: "/api/v3" });
    const s = k.check(spec("feature", { base: "other", draft: true }));
    const r = await interpret(k, s, "job-2/1", Date.now());
    expect(r.outcome).toBe("applied");
    expect(gh.pullRequests("acme", "app")[0]).toMatchObject({ base: "other", draft: true });
    expect(hasKeyMarker(gh.pullRequests("acme", "app")[0]?.body, "job-2/1")).toBe(true);
    expect(gh.requests().every((r) => r.path.startsWith("/api/v3/"))).toBe(true);
  });

  it("scans every key its account marked in the repository's recent pull requests", async () => {
    const { gh, k } = await setUp();
    const since = Date.now();
    await interpret(k, k.check(spec("feature")), "job-1/0", since);
    await interpret(k, k.check(spec("other")), "job-2/0", since);
    gh.addPullRequest("acme", "app", {
      title: "x",
      head: "feature",
      base: "other",
      user: "someone",
      body: "<!-- idem-effect: job-3/0 -->",
    });
    const keys = await k.scan(k.check(spec("feature")));
    expect(Object.fromEntries(keys ?? [])).toEqual({ "job-1/0": ["#1"], "job-2/0": ["#2"] });
  });
});
