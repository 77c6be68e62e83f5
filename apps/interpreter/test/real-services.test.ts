// The interpreter against GitHub and Slack as they really behave (their stand-ins' models,
// packages/testing/README.md): an interpreter left running across a GitHub App installation
// token's expiry keeps applying, and a Slack app on the slowest history tier (one call a minute,
// 15 messages a page) ends its effect applied once with 40 messages in the probe window.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadKinds, openEffects, recordOutput } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { type Clock, type Config, parseConfig, sleep } from "@idem/schema";
import { skippingClock, startGitHubStandIn, startSlackStandIn, tempDir } from "@idem/testing";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createInterpreter } from "../src/index.js";

function configOf(dir: string, sections: Record<string, unknown>): Config {
  const parsed = parseConfig(
    {
      journal: { path: "journal.db" },
      // Long leases: a rate limit's wait inside an effect holds the run meanwhile.
      interpreter: { backoffMs: [200], maxAttempts: 5, leaseMs: 3_600_000, pollMs: 20 },
      ...sections,
    },
    { dir },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

/** Runs an interpreter over `config` while `body` records outputs and waits for them. */
async function withInterpreter(
  config: Config,
  o: { clock?: Clock; env?: Record<string, string | undefined> },
  body: (
    submit: (jobId: string, effect: Record<string, unknown>) => Promise<void>,
  ) => Promise<void>,
) {
  const kinds = await loadKinds(config);
  const journal = await openSqliteJournal(config.journal.path, o.clock ? { clock: o.clock } : {});
  const effects = openEffects(config, {
    kinds,
    ...(o.env ? { env: o.env } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const interpreter = createInterpreter({
    config,
    journal,
    effects,
    logger: pino({ level: "silent" }),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  interpreter.start();
  try {
    await body(async (jobId, effect) => {
      const r = await recordOutput({
        journal,
        config,
        kinds,
        output: { jobId, agent: "writer", effects: [effect] },
        source: "cli",
      });
      expect(r.status).toBe("recorded");
      for (let i = 0; ; i++) {
        const run = await journal.runs.latest(jobId);
        if (run?.state === "done") return;
        if (run?.state === "dead" || i > 3000) throw new Error(`${jobId}: ${JSON.stringify(run)}`);
        await sleep(20);
      }
    });
  } finally {
    await interpreter.stop();
    await effects.close();
    await journal.close();
  }
}

describe("an interpreter against GitHub and Slack as they behave", () => {
  it("keeps applying across a GitHub App installation token's expiry on GitHub's clock", async () => {
    await using dir = await tempDir("idem-gh-app-");
    let ahead = 0;
    await using gh = await startGitHubStandIn({ now: () => Date.now() + ahead });
    gh.createRepo({ owner: "acme", name: "app" });
    const app = gh.createApp({ slug: "release-bot" });
    writeFileSync(join(dir.path, "app.pem"), app.privateKey, { mode: 0o600 });
    const config = configOf(dir.path, {
      github: {
        baseUrl: gh.url,
        app: { appId: app.appId, installationId: app.installationId, privateKeyFile: "app.pem" },
        repos: { app: { owner: "acme", name: "app" } },
      },
    });
    await withInterpreter(config, {}, async (submit) => {
      await submit("job-1", { kind: "github.issue", repo: "app", title: "before the hour" });
      // An hour and a minute later on GitHub's clock: the token the interpreter holds has expired
      // (GitHub answers 401), and GitHub's clock is now ahead of the JWT's times.
      ahead = 61 * 60_000;
      await submit("job-2", { kind: "github.issue", repo: "app", title: "after the hour" });
    });
    expect(gh.issues("acme", "app").map((i) => [i.title, i.user])).toEqual([
      ["before the hour", "release-bot[bot]"],
      ["after the hour", "release-bot[bot]"],
    ]);
    expect(gh.expiredTokenRefusals()).toBe(1);
    expect(gh.installationTokensMinted()).toBe(2);
    gh.assertNoViolations();
  });

  it("ends a Slack effect applied once on the 1-a-minute history tier with 40 messages in the window", async () => {
    await using dir = await tempDir("idem-slack-tier-");
    const clock = skippingClock();
    await using sl = await startSlackStandIn({
      now: () => clock.now(),
      distribution: "non-marketplace",
    });
    const ops = sl.createChannel({ name: "ops" });
    for (let i = 0; i < 40; i++)
      sl.addMessage(ops, { text: `chatter ${i}`, at: clock.now() - 60_000 + i });
    const config = configOf(dir.path, {
      slack: { baseUrl: sl.url, tokenEnv: "SLACK_TOKEN", channels: { ops } },
    });
    await withInterpreter(config, { clock, env: { SLACK_TOKEN: sl.token } }, async (submit) => {
      await submit("deploy-42", {
        kind: "slack.message",
        channel: "ops",
        text: "Deploy 42 is live.",
      });
    });
    expect(
      sl
        .messages(ops)
        .filter((m) => m.botId)
        .map((m) => m.text),
    ).toEqual(["Deploy 42 is live."]);
    expect(sl.tierRateLimitRefusals()).toBeGreaterThanOrEqual(2);
    sl.assertNoViolations();
  });
});
