import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitSpec, type OpsFixture, opsFixture } from "./ops-fixture.js";
import { gitIn, idem } from "./ops-helpers.js";

let fx: OpsFixture;
beforeEach(async () => {
  fx = await opsFixture();
});
afterEach(async () => {
  await fx.close();
});

interface Audit {
  enqueued: number;
  outputs: number;
  effects: { applied: number; present: number };
  duplicateEffectsAtTargets: number;
  duplicates: { key: string; count: number }[];
  drift: { key: string; reason: string }[];
  deadLetters: number;
}

async function audit(...args: string[]): Promise<{ code: number; report: Audit }> {
  const r = await idem(["audit", "--json", "--config", fx.ws.config, ...args]);
  expect(r.stderr).toBe("");
  return { code: r.code, report: JSON.parse(r.stdout) as Audit };
}

async function fiveCommits(): Promise<void> {
  for (let i = 0; i < 5; i++) await fx.record(`job-${i}`, [commitSpec(`f${i}.txt`, `v${i}\n`)]);
  await fx.interpret();
}

// Drift and the report's logic are tested on @idem/core in packages/core/test/audit-report.test.ts;
// these tests are the command's own behaviour: --json, the tables, --since and the exit codes.
describe("idem audit", () => {
  it("is clean after processing and counts outputs and applied effects", async () => {
    await fiveCommits();
    await fx.record("file-1", [
      { kind: "file.write", root: "outbox", path: "a.txt", content: "hello\n" },
    ]);
    await fx.interpret();
    const { code, report } = await audit();
    expect(code).toBe(0);
    expect(report).toMatchObject({
      outputs: 6,
      effects: { applied: 6, present: 0 },
      duplicateEffectsAtTargets: 0,
      duplicates: [],
      drift: [],
      deadLetters: 0,
    });
    const table = await idem(["audit", "--config", fx.ws.config]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("outputs recorded");
    expect(table.stdout).toContain("clean");
  });

  it("exits 3 and lists the key when a hand-made commit carries an existing key", async () => {
    await fiveCommits();
    writeFileSync(join(fx.repoDir, "evil.txt"), "copy\n");
    gitIn(fx.repoDir, "add", "evil.txt");
    gitIn(fx.repoDir, "commit", "-q", "-m", "a copy\n\nIdem-Effect: job-2/0");
    const { code, report } = await audit();
    expect(code).toBe(3);
    expect(report.duplicates).toEqual([expect.objectContaining({ key: "job-2/0", count: 2 })]);
    expect(report.duplicateEffectsAtTargets).toBe(1);
    expect(report.drift).toEqual([]);
    const table = await idem(["audit", "--config", fx.ws.config]);
    expect(table.code).toBe(3);
    expect(table.stdout).toContain("job-2/0");
  });

  it("limits the report to --since", async () => {
    await fiveCommits();
    const { report } = await audit("--since", "1h");
    expect(report.outputs).toBe(5);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const later = await audit("--since", future);
    expect(later.report).toMatchObject({ outputs: 0, effects: { applied: 0 } });
    const bad = await idem(["audit", "--since", "yesterday", "--config", fx.ws.config]);
    expect(bad.code).toBe(2);
  });
});
