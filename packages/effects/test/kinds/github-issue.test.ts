import { markedKeys } from "@idem/kit";
import { afterEach, describe, expect, it } from "vitest";
import { githubIssueKind } from "../../src/kinds/github-issue/github-issue-kind.js";
import { type GitHubFixture, githubFixture } from "./github-fixture.js";
import { expectIdemError, interpret, rejection } from "./kind-calls.js";

const spec = (title: string, extra: Record<string, unknown> = {}) => ({
  kind: "github.issue",
  repo: "app",
  title,
  body: "Seen in the nightly run.",
  ...extra,
});

let fx: GitHubFixture | undefined;
afterEach(async () => {
  fx?.gh.assertNoViolations();
  await fx?.[Symbol.asyncDispose]();
  fx = undefined;
});

async function setUp() {
  fx = await githubFixture({ branches: ["feature"] });
  return { gh: fx.gh, k: fx.open(githubIssueKind) };
}

const issueLists = (gh: GitHubFixture["gh"], from: number) =>
  gh
    .requests()
    .slice(from)
    .filter((r) => r.method === "GET" && /\/issues$/.test(r.path));

describe("github.issue", () => {
  it("is absent before, present after its apply, and a second apply opens nothing", async () => {
    const { gh, k } = await setUp();
    const s = k.check(spec("Flaky test", { labels: ["bug", "ci"] }));
    const since = Date.now();
    expect((await k.probe(s, "job-1/0", { since })).status).toBe("absent");
    const first = await interpret(k, s, "job-1/0", since);
    expect(first).toMatchObject({ outcome: "applied", detail: { number: 1, state: "open" } });
    expect(await k.probe(s, "job-1/0", { since })).toEqual({
      status: "present",
      detail: first.detail,
    });
    expect(await k.apply(s, "job-1/0", { since })).toEqual(first.detail);
    const issues = gh.issues("acme", "app");
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ title: "Flaky test", labels: ["bug", "ci"], user: gh.login });
    expect(markedKeys(issues[0]?.body)).toEqual(["job-1/0"]);
    expect(gh.creates().issue).toBe(1);
    // The probe asks the lists only, and checks the author itself: no `creator` filter, which
    // GitHub does not assure for a bot's login.
    const q = issueLists(gh, 0)[0]?.query ?? "";
    expect(q).not.toContain("creator=");
    expect(q).toContain("state=all");
    expect(q).toMatch(/since=\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\dZ/);
  });

  it("opens no second issue after a crash between create and record", async () => {
    const { gh, k } = await setUp();
    const s = k.check(spec("Flaky test"));
    const since = Date.now();
    gh.dropAfterCreate({ match: (c) => c.kind === "issue" });
    expectIdemError(await rejection(interpret(k, s, "job-1/0", since)), "UNAVAILABLE");
    expect(gh.creates().issue).toBe(1);
    expect((await interpret(k, s, "job-1/0", since)).outcome).toBe("present");
    expect(gh.issues("acme", "app")).toHaveLength(1);
  });

  it("opens it once when the create was refused before it was performed (a 502)", async () => {
    const { gh, k } = await setUp();
    const s = k.check(spec("Flaky test"));
    const since = Date.now();
    gh.failNext({ status: 502, match: (r) => r.method === "POST" });
    expectIdemError(await rejection(interpret(k, s, "job-1/0", since)), "UNAVAILABLE");
    expect(gh.creates().issue).toBe(0);
    expect((await interpret(k, s, "job-1/0", since)).outcome).toBe("applied");
    expect(gh.issues("acme", "app")).toHaveLength(1);
  });

  it("finds its issue past the first page, following GitHub's Link header", async () => {
    const { gh, k } = await setUp();
    const s = k.check(spec("Flaky test"));
    const since = Date.now();
    await interpret(k, s, "job-1/0", since);
    for (let i = 0; i < 150; i++)
      gh.addIssue("acme", "app", { title: `later ${i}`, createdAt: since + 120_000 });
    const before = gh.requests().length;
    expect(await k.probe(s, "job-1/0", { since })).toMatchObject({
      status: "present",
      detail: { number: 1 },
    });
    expect(issueLists(gh, before).map((r) => r.path)).toEqual([
      "/repos/acme/app/issues",
      "/repositories/1296269/issues",
    ]);
  });

  it("stops at the first issue created before the recording time, however many were updated since", async () => {
    const { gh, k } = await setUp();
    const since = Date.now();
    for (let i = 0; i < 150; i++) {
      const n = gh.addIssue("acme", "app", { title: `old ${i}`, createdAt: since - 86_400_000 });
      gh.addComment("acme", "app", n, { body: "still happening" });
    }
    const before = gh.requests().length;
    expect((await k.probe(k.check(spec("x")), "job-1/0", { since })).status).toBe("absent");
    expect(issueLists(gh, before)).toHaveLength(1);
  });

  it("counts neither a person's issue nor a pull request that carry the marker", async () => {
    const { gh, k } = await setUp();
    const since = Date.now();
    gh.addIssue("acme", "app", {
      title: "copy",
      user: "someone",
      body: "<!-- idem-effect: job-1/0 -->",
    });
    gh.addPullRequest("acme", "app", {
      title: "pr",
      head: "feature",
      body: "<!-- idem-effect: job-1/0 -->",
    });
    expect((await k.probe(k.check(spec("x")), "job-1/0", { since })).status).toBe("absent");
  });

  it("never asks the search API, so its lag does not matter", async () => {
    const { gh, k } = await setUp();
    gh.setSearchLag(3_600_000);
    const s = k.check(spec("Flaky test"));
    const since = Date.now();
    await interpret(k, s, "job-1/0", since);
    expect((await k.probe(s, "job-1/0", { since })).status).toBe("present");
    expect(gh.requests().some((r) => r.path.includes("/search"))).toBe(false);
  });

  it("scans every key its account marked in the repository's recent issues", async () => {
    const { gh, k } = await setUp();
    const since = Date.now();
    await interpret(k, k.check(spec("a")), "job-1/0", since);
    await interpret(k, k.check(spec("b")), "job-2/0", since);
    gh.addIssue("acme", "app", { title: "dup", body: "<!-- idem-effect: job-1/0 -->" });
    const keys = await k.scan(k.check(spec("a")));
    expect(Object.fromEntries(keys ?? [])).toEqual({ "job-1/0": ["#3", "#1"], "job-2/0": ["#2"] });
  });
});
