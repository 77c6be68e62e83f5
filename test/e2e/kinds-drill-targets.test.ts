// The conformance drill (`idem kinds test`) on idem's GitHub and Slack kinds against their
// stand-ins, while the stand-ins perform creates and drop the connection before answering (the
// crash window that makes other tools duplicate): every key must be at its target exactly once,
// and every request idem made must match GitHub's own description. (github.issue alone, without
// drops, is in kinds-drill.test.ts; sql.exec's drills are beside its kind's tests.)
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DRILL_VERDICTS, drillKind, type KindDrillReport } from "@idem/kit/drill";
import { startGitHubStandIn, startSlackStandIn, tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { buildForTest, IDEM_BIN } from "../chaos/interpreter-fixture.js";

beforeAll(() => buildForTest("apps/cli"));

/** The environment of every child: nothing that names another config, journal or fault. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.IDEM_CONFIG;
  delete env.IDEM_FAULT;
  delete env.IDEM_JOURNAL_URL;
  return env;
}

/** Drops the connection after the first creates of the drill's crash phase. */
const DROPS = 3;
/**
 * Whether a create belongs to the drill's crash phase, where the interpreter meets the drops and
 * must probe before it creates again; its checks phase (keys `<drill>-check/<n>`) asks each call
 * of the kind once, so a drop there would be the check's own failure.
 */
const crashPhase = (text: string) => !text.includes("-check/");

function expectExactlyOnce(report: KindDrillReport): void {
  expect(report.findings, JSON.stringify(report.findings)).toEqual([]);
  expect(report.verdict).toBe(DRILL_VERDICTS.EXACTLY_ONCE);
  expect(report.counts.duplicated).toBe(0);
  expect(report.counts.missing).toBe(0);
}

describe("the conformance drill on the GitHub and Slack kinds, their targets dropping answers", () => {
  it.concurrent.each(["github.pull_request", "github.issue", "github.comment"])(
    "finds %s exactly once in effect against the GitHub stand-in",
    async (kind) => {
      await using dir = await tempDir("idem-drill-gh-");
      await using gh = await startGitHubStandIn();
      // The drill's pull requests come from heads it names (idem-drill-<n>): they exist as if an
      // earlier git effect had pushed them; its comments go on issue 1.
      gh.createRepo({
        owner: "acme",
        name: "app",
        pushedOnDemand: (b) => b.startsWith("idem-drill-"),
      });
      gh.addIssue("acme", "app", { title: "the drill's comments go here" });
      gh.dropAfterCreate({ times: DROPS, match: (c) => crashPhase(JSON.stringify(c.body)) });
      writeFileSync(
        join(dir.path, "idem.config.json"),
        JSON.stringify({
          github: {
            baseUrl: gh.url,
            tokenEnv: "DRILL_GITHUB_TOKEN",
            repos: { app: { owner: "acme", name: "app" } },
          },
        }),
      );
      const report = await drillKind(kind, {
        idem: IDEM_BIN,
        cwd: dir.path,
        outputs: 3,
        env: cleanEnv({ DRILL_GITHUB_TOKEN: gh.token }),
      });
      expectExactlyOnce(report);
      // The drops happened (a create performed, its answer lost) and none made a second item.
      const created =
        gh.creates()[kind.slice("github.".length) as "pull_request" | "issue" | "comment"];
      expect(created).toBeGreaterThanOrEqual(DROPS);
      gh.assertNoViolations();
    },
  );

  it.concurrent("finds slack.message exactly once in effect against the Slack stand-in", async () => {
    await using dir = await tempDir("idem-drill-slack-");
    await using slack = await startSlackStandIn();
    const channel = slack.createChannel({ name: "ops" });
    slack.dropAfterPost({ times: DROPS, match: (p) => crashPhase(JSON.stringify(p.metadata)) });
    writeFileSync(
      join(dir.path, "idem.config.json"),
      JSON.stringify({
        slack: {
          baseUrl: slack.url,
          tokenEnv: "DRILL_SLACK_TOKEN",
          channels: { ops: channel },
        },
      }),
    );
    const report = await drillKind("slack.message", {
      idem: IDEM_BIN,
      cwd: dir.path,
      outputs: 3,
      env: cleanEnv({ DRILL_SLACK_TOKEN: slack.token }),
    });
    expectExactlyOnce(report);
    expect(slack.requests().filter((r) => r.dropped)).toHaveLength(DROPS);
  });
});
