import { markedKeys } from "@idem/kit";
import { afterEach, describe, expect, it } from "vitest";
import { githubCommentKind } from "../../src/kinds/github-comment/github-comment-kind.js";
import { type GitHubFixture, githubFixture } from "./github-fixture.js";
import { expectIdemError, fieldOf, interpret, rejection } from "./kind-calls.js";

const spec = (number: number, body = "Looks good to me.") => ({
  kind: "github.comment",
  repo: "app",
  number,
  body,
});

let fx: GitHubFixture | undefined;
afterEach(async () => {
  fx?.gh.assertNoViolations();
  await fx?.[Symbol.asyncDispose]();
  fx = undefined;
});

async function setUp() {
  fx = await githubFixture({ branches: ["feature"] });
  const gh = fx.gh;
  const issue = gh.addIssue("acme", "app", { title: "an issue", user: "someone" });
  const pull = gh.addPullRequest("acme", "app", { title: "a pull request", head: "feature" });
  return { gh, k: fx.open(githubCommentKind), issue, pull };
}

describe("github.comment", () => {
  it("comments once on an issue and once on a pull request, and a second apply writes nothing", async () => {
    const { gh, k, issue, pull } = await setUp();
    const since = Date.now();
    for (const [n, key] of [
      [issue, "job-1/0"],
      [pull, "job-1/1"],
    ] as const) {
      const s = k.check(spec(n));
      expect((await k.probe(s, key, { since })).status).toBe("absent");
      const first = await interpret(k, s, key, since);
      expect(first.outcome).toBe("applied");
      expect(first.detail).toMatchObject({ id: expect.any(Number), url: expect.any(String) });
      expect(await k.probe(s, key, { since })).toEqual({ status: "present", detail: first.detail });
      expect(await k.apply(s, key, { since })).toEqual(first.detail);
      const comments = gh.comments("acme", "app", n);
      expect(comments).toHaveLength(1);
      expect(markedKeys(comments[0]?.body)).toEqual([key]);
    }
    expect(gh.creates().comment).toBe(2);
  });

  it("writes no second comment after a crash between create and record", async () => {
    const { gh, k, pull } = await setUp();
    const s = k.check(spec(pull));
    const since = Date.now();
    gh.dropAfterCreate({ match: (c) => c.kind === "comment" });
    expectIdemError(await rejection(interpret(k, s, "job-1/0", since)), "UNAVAILABLE");
    expect((await interpret(k, s, "job-1/0", since)).outcome).toBe("present");
    expect(gh.comments("acme", "app", pull)).toHaveLength(1);
    expect(gh.creates().comment).toBe(1);
  });

  it("finds its comment past the first page of the conversation", async () => {
    const { gh, k, issue } = await setUp();
    const since = Date.now();
    for (let i = 0; i < 150; i++) gh.addComment("acme", "app", issue, { body: `bot note ${i}` });
    const s = k.check(spec(issue));
    await interpret(k, s, "job-1/0", since);
    const before = gh.requests().length;
    expect((await k.probe(s, "job-1/0", { since })).status).toBe("present");
    const lists = gh.requests().slice(before);
    expect(lists.map((r) => r.path)).toEqual([
      `/repos/acme/app/issues/${issue}/comments`,
      `/repositories/1296269/issues/${issue}/comments`,
    ]);
  });

  it("asks only for the comments since the recording time less the allowed skew", async () => {
    const { gh, k, issue } = await setUp();
    const since = Date.now();
    for (let i = 0; i < 150; i++)
      gh.addComment("acme", "app", issue, {
        body: "<!-- idem-effect: job-1/0 -->",
        createdAt: since - 86_400_000,
      });
    const before = gh.requests().length;
    expect((await k.probe(k.check(spec(issue)), "job-1/0", { since })).status).toBe("absent");
    expect(
      gh
        .requests()
        .slice(before)
        .filter((r) => r.path.endsWith("/comments")),
    ).toHaveLength(1);
  });

  it("does not count a person's comment that quotes the marker", async () => {
    const { gh, k, issue } = await setUp();
    const since = Date.now();
    gh.addComment("acme", "app", issue, {
      body: "> <!-- idem-effect: job-1/0 -->",
      user: "someone",
    });
    expect((await k.probe(k.check(spec(issue)), "job-1/0", { since })).status).toBe("absent");
  });

  it("names the number when there is no such issue or pull request", async () => {
    const { gh, k } = await setUp();
    const e = await rejection(interpret(k, k.check(spec(99)), "job-1/0", Date.now()));
    expectIdemError(e, "INVALID_INPUT");
    expect(fieldOf(e)).toBe("number");
    expect(gh.creates().comment).toBe(0);
  });

  it("scans the keys marked in the conversation, a duplicate listed twice", async () => {
    const { gh, k, issue } = await setUp();
    const since = Date.now();
    const first = await interpret(k, k.check(spec(issue)), "job-1/0", since);
    const dup = gh.addComment("acme", "app", issue, { body: "<!-- idem-effect: job-1/0 -->" });
    const keys = await k.scan(k.check(spec(issue)));
    expect(Object.fromEntries(keys ?? [])).toEqual({
      "job-1/0": [`comment ${first.detail.id}`, `comment ${dup}`],
    });
  });
});
