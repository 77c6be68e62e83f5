import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { commitSpec, type OpsFixture, opsFixture } from "./ops-fixture.js";
import { gitIn, idem } from "./ops-helpers.js";

let fx: OpsFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

interface Plan {
  plan: { key: string; jobId: string; kind: string; action: string; reason: string }[];
  summary: { apply: number; skip: number; conflict: number; uncertain: number };
}

async function dryRun(f: OpsFixture, ...selection: string[]): Promise<Plan> {
  const r = await idem(["replay", ...selection, "--dry-run", "--json", "--config", f.ws.config]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Plan;
}

/** The journal's files, byte for byte. */
function journalBytes(path: string): Buffer[] {
  return [path, `${path}-wal`].map((p) => (existsSync(p) ? readFileSync(p) : Buffer.alloc(0)));
}

// The plan's logic (dependent patches, superseded writes, busy outputs) is tested on @idem/core in
// packages/core/test/replay-plan.test.ts; these tests are the command's own behaviour.
describe("idem replay", () => {
  it("after an incident losing 20 of 50 effects plans exactly those 20 without touching the journal, then restores each key once", async () => {
    fx = await opsFixture();
    for (let i = 0; i < 50; i++) {
      await fx.record(`job-${String(i).padStart(2, "0")}`, [commitSpec(`f/${i}.txt`, `${i}\n`)]);
    }
    expect((await fx.interpret()).runs.done).toBe(50);
    gitIn(fx.repoDir, "reset", "-q", "--hard", "HEAD~20");
    await fx.journal.close();

    const before = journalBytes(fx.journalPath);
    const plan = await dryRun(fx, "--all");
    expect(journalBytes(fx.journalPath)).toEqual(before);
    const lost = Array.from({ length: 20 }, (_, i) => `job-${30 + i}/0`);
    expect(plan.plan.filter((e) => e.action === "apply").map((e) => e.key)).toEqual(lost);
    expect(plan.summary).toEqual({ apply: 20, skip: 30, conflict: 0, uncertain: 0 });

    const table = await idem(["replay", "--all", "--dry-run", "--config", fx.ws.config]);
    expect(table.stdout).toContain("20 apply");
    expect(journalBytes(fx.journalPath)).toEqual(before);

    const r = await idem([
      "replay",
      "--all",
      "--now",
      "--yes",
      "--reason",
      "site reset by 20 commits",
      "--config",
      fx.ws.config,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const log = gitIn(fx.repoDir, "log", "--format=%B", "main");
    for (let i = 0; i < 50; i++) {
      const key = `job-${String(i).padStart(2, "0")}/0`;
      expect(log.split("\n").filter((l) => l === `Idem-Effect: ${key}`)).toHaveLength(1);
    }
    const audit = await idem(["audit", "--json", "--config", fx.ws.config]);
    expect(audit.code, audit.stdout).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ duplicates: [], drift: [] });

    const again = await dryRun(fx, "--all");
    expect(again.summary).toEqual({ apply: 0, skip: 50, conflict: 0, uncertain: 0 });
  });

  it("refuses without a terminal and without --yes, changing nothing; needs a selection", async () => {
    fx = await opsFixture();
    await fx.record("job-1", [commitSpec("a.txt", "a\n")]);
    await fx.interpret();
    const r = await idem(["replay", "--all", "--reason", "r", "--config", fx.ws.config]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--yes");
    expect((await fx.journal.runs.forJob("job-1")).map((x) => x.generation)).toEqual([1]);
    const none = await idem(["replay", "--config", fx.ws.config]);
    expect(none.code).toBe(2);

    const ok = await idem([
      "replay",
      "--job",
      "job-1",
      "--yes",
      "--reason",
      "r",
      "--config",
      fx.ws.config,
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("running interpreter");
    const runs = await fx.journal.runs.forJob("job-1");
    expect(runs.map((x) => [x.generation, x.state])).toEqual([
      [1, "done"],
      [2, "pending"],
    ]);
  });
});
