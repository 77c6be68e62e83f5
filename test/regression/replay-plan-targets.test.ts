// A replay plan once named an effect's target by a key built from the fields idem's first kinds
// had (`repo`, `root`, `target`, `branch`), asking the kind only once per key: two github.comment
// effects on issues of one repository (or two effects of a user kind on one `repo`) shared the
// first one's target, so the plan reported both there and one probe failure marked both a
// conflict. The plan now asks each effect's kind for its target.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadKinds } from "@idem/core";
import { effectTargetsOf } from "@idem/effects";
import { openSqliteJournal } from "@idem/journal";
import { type EffectSpec, parseConfig } from "@idem/schema";
import { startGitHubStandIn } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { idem, workspace } from "../../apps/cli/test/ops-helpers.js";

const TICKET = fileURLToPath(new URL("../fixtures/kinds/ticket-kind.mjs", import.meta.url));

describe("regression: a replay plan names each effect's own target", () => {
  it("reports comments on two issues, and a user kind's effects on two tickets of one repo, each under its own target", async () => {
    await using gh = await startGitHubStandIn();
    gh.createRepo({ owner: "acme", name: "app" });
    const [one, two] = [
      gh.addIssue("acme", "app", { title: "first" }),
      gh.addIssue("acme", "app", { title: "second" }),
    ];
    const ws = workspace();
    try {
      const raw = {
        github: {
          baseUrl: gh.url,
          tokenEnv: "PLAN_GITHUB_TOKEN",
          repos: { app: { owner: "acme", name: "app" } },
        },
        kinds: { "fixture.ticket": { module: TICKET, options: { dir: join(ws.dir, "tickets") } } },
      };
      ws.writeConfig(raw);
      const parsed = parseConfig(raw, { dir: ws.dir, file: ws.config });
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
      const registry = await loadKinds(parsed.config);
      const effects: EffectSpec[] = [
        { kind: "github.comment", repo: "app", number: one, body: "on the first" },
        { kind: "github.comment", repo: "app", number: two, body: "on the second" },
        { kind: "fixture.ticket", repo: "tracker", ticket: 1, text: "a" },
        { kind: "fixture.ticket", repo: "tracker", ticket: 2, text: "b" },
      ];
      const journal = await openSqliteJournal(parsed.config.journal.path);
      try {
        const output = { jobId: "job-1", agent: "writer", effects };
        const r = await journal.outputs.record(output, {
          source: "cli",
          targets: effectTargetsOf(output, parsed.config, registry),
        });
        expect(r.status).toBe("recorded");
      } finally {
        await journal.close();
      }
      const env = { PLAN_GITHUB_TOKEN: gh.token };
      const applied = await idem(["interpreter", "--once", "--config", ws.config], { env });
      expect(applied.code, applied.stderr).toBe(0);
      expect(gh.comments("acme", "app", one)).toHaveLength(1);
      expect(gh.comments("acme", "app", two)).toHaveLength(1);
      const run = await idem(["replay", "--all", "--dry-run", "--json", "--config", ws.config], {
        env,
      });
      expect(run.code, run.stderr).toBe(0);
      const plan = JSON.parse(run.stdout) as { plan: { key: string; reason: string }[] };
      const reasons = new Map(plan.plan.map((e) => [e.key, e.reason]));
      const at = (target: string) => new RegExp(`^present at ${target}(?![0-9])`);
      expect(reasons.get("job-1/0")).toMatch(at(`github:app#${one}`));
      expect(reasons.get("job-1/1")).toMatch(at(`github:app#${two}`));
      expect(reasons.get("job-1/2")).toMatch(at("ticket:tracker#1"));
      expect(reasons.get("job-1/3")).toMatch(at("ticket:tracker#2"));
      gh.assertNoViolations();
    } finally {
      ws.remove();
    }
  });
});
