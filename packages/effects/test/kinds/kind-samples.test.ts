// The samples the conformance drill takes from each github.* and slack.message kind hold: the
// invalid ones are refused naming their field, and the valid ones are distinct effects that apply
// once on a configured target (the drill's own target must have the same set-up: for
// github.pull_request, branches idem-drill-<i>; for github.comment, issue #1).
import { type AnyEffectKind, type OpenedKind, openKind } from "@idem/kit";
import { startSlackStandIn } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { githubCommentKind } from "../../src/kinds/github-comment/github-comment-kind.js";
import { githubIssueKind } from "../../src/kinds/github-issue/github-issue-kind.js";
import { githubPullRequestKind } from "../../src/kinds/github-pull-request/github-pull-request-kind.js";
import { slackMessageKind } from "../../src/kinds/slack-message/slack-message-kind.js";
import { githubFixture } from "./github-fixture.js";
import { expectIdemError, fieldOf, interpret } from "./kind-calls.js";

const GITHUB = [githubPullRequestKind, githubIssueKind, githubCommentKind];

/** Runs samples 0..2 through probe and apply twice: each applied once, then present. */
async function drill(k: OpenedKind, count = () => 0): Promise<void> {
  const since = Date.now();
  const specs = [0, 1, 2].map((i) => k.check(k.kind.samples?.valid(i, k.context)));
  expect(new Set(specs.map((s) => JSON.stringify(s))).size).toBe(3);
  for (const [i, s] of specs.entries())
    expect((await interpret(k, s, `drill-${i}/0`, since)).outcome).toBe("applied");
  for (const [i, s] of specs.entries())
    expect((await interpret(k, s, `drill-${i}/0`, since)).outcome).toBe("present");
  expect(count()).toBe(3);
  const keys = await k.scan(specs[0] as never);
  for (const i of [0, 1, 2]) expect(keys?.get(`drill-${i}/0`)).toHaveLength(1);
}

function refusesInvalidSamples(kind: AnyEffectKind, options: unknown): void {
  const k = openKind(kind, { options, env: {} });
  expect(kind.samples?.invalid.length).toBeGreaterThan(0);
  for (const sample of kind.samples?.invalid ?? []) {
    let e: unknown;
    try {
      k.check(sample.spec);
    } catch (err) {
      e = err;
    }
    expectIdemError(e, "INVALID_INPUT");
    expect(fieldOf(e), JSON.stringify(sample.spec).slice(0, 120)).toBe(sample.field);
  }
}

describe("the samples of the github.* and slack.message kinds", () => {
  it("refuse every invalid sample, naming its field", () => {
    const github = { repos: { app: { owner: "acme", name: "app" } } };
    for (const kind of GITHUB) refusesInvalidSamples(kind, github);
    refusesInvalidSamples(slackMessageKind, { channels: { ops: "C0123ABCD" } });
  });

  it("apply three distinct valid samples of each github.* kind once each", async () => {
    await using fx = await githubFixture({
      branches: ["idem-drill-0", "idem-drill-1", "idem-drill-2"],
    });
    fx.gh.addIssue("acme", "app", { title: "where the drill comments" });
    const pulls = fx.open(githubPullRequestKind);
    await drill(pulls, () => fx.gh.pullRequests("acme", "app").length);
    await drill(fx.open(githubIssueKind), () => fx.gh.issues("acme", "app").length - 1);
    await drill(fx.open(githubCommentKind), () => fx.gh.comments("acme", "app", 1).length);
    fx.gh.assertNoViolations();
  });

  it("apply three distinct valid samples of slack.message once each", async () => {
    await using sl = await startSlackStandIn();
    const ops = sl.createChannel({ name: "ops" });
    const k = openKind(slackMessageKind, {
      options: { baseUrl: sl.url, tokenEnv: "T", channels: { ops } },
      env: { T: sl.token },
    });
    await drill(k, () => sl.messages(ops).length);
    await k.close();
    sl.assertNoViolations();
  });
});
