import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ArchiveWriter } from "../src/archive/archive-writer.js";
import { buildAudit, isAuditClean } from "../src/audit/audit-report.js";
import { commitSpec, gitIn, type OpsFixture, opsFixture } from "./ops-fixture.js";

let fx: OpsFixture;
beforeEach(async () => {
  fx = await opsFixture();
});
afterEach(async () => {
  await fx.close();
});

const audit = (since?: number) => buildAudit(fx.config, fx.journal, fx.effects, since);

async function fiveCommits(): Promise<void> {
  for (let i = 0; i < 5; i++) await fx.record(`job-${i}`, [commitSpec(`f${i}.txt`, `v${i}\n`)]);
  await fx.interpret();
}

describe("buildAudit", () => {
  it("is clean after processing and counts outputs and applied effects", async () => {
    await fiveCommits();
    await fx.record("file-1", [
      { kind: "file.write", root: "outbox", path: "a.txt", content: "hello\n" },
    ]);
    await fx.interpret();
    const report = await audit();
    expect(isAuditClean(report)).toBe(true);
    expect(report).toMatchObject({
      outputs: 6,
      effects: { applied: 6, present: 0 },
      duplicateEffectsAtTargets: 0,
      duplicates: [],
      drift: [],
      deadLetters: 0,
    });
  });

  it("lists the key when a hand-made commit carries an existing key", async () => {
    await fiveCommits();
    writeFileSync(join(fx.repoDir, "evil.txt"), "copy\n");
    gitIn(fx.repoDir, "add", "evil.txt");
    gitIn(fx.repoDir, "commit", "-q", "-m", "a copy\n\nIdem-Effect: job-2/0");
    const report = await audit();
    expect(isAuditClean(report)).toBe(false);
    expect(report.duplicates).toEqual([expect.objectContaining({ key: "job-2/0", count: 2 })]);
    expect(report.duplicateEffectsAtTargets).toBe(1);
    expect(report.drift).toEqual([]);
  });

  it("reports a deleted effect commit as drift", async () => {
    await fiveCommits();
    gitIn(fx.repoDir, "reset", "-q", "--hard", "HEAD~1");
    const report = await audit();
    expect(isAuditClean(report)).toBe(false);
    expect(report.drift.map((d) => d.key)).toEqual(["job-4/0"]);
    expect(report.duplicates).toEqual([]);
  });

  it("reports an overwritten file as drift, but not a file replaced by a later recorded write", async () => {
    const write = (content: string) =>
      ({ kind: "file.write", root: "outbox", path: "notes/a.txt", content }) as const;
    await fx.record("a", [write("from A\n")]);
    await fx.record("b", [write("from B\n")]);
    await fx.interpret();
    expect(readFileSync(join(fx.rootDir, "notes/a.txt"), "utf8")).toBe("from B\n");
    expect(isAuditClean(await audit())).toBe(true);
    writeFileSync(join(fx.rootDir, "notes/a.txt"), "edited by hand\n");
    const report = await audit();
    expect(isAuditClean(report)).toBe(false);
    expect(report.drift.map((d) => d.key)).toEqual(["b/0"]);
  });

  it("limits the report to a since time", async () => {
    await fiveCommits();
    expect((await audit(Date.now() - 3_600_000)).outputs).toBe(5);
    const later = await audit(Date.now() + 3_600_000);
    expect(later).toMatchObject({ outputs: 0, effects: { applied: 0 }, enqueued: 0 });
  });

  it("reports keys at a target that neither the journal nor the archive knows, and is not clean", async () => {
    await fiveCommits();
    // A key of a recorded job with an index it never had, written by hand.
    gitIn(fx.repoDir, "commit", "-q", "--allow-empty", "-m", "by hand\n\nIdem-Effect: job-3/7");
    const first = await audit();
    expect(first.unknownKeys.map((u) => [u.key, u.target])).toEqual([["job-3/7", "site@main"]]);
    expect(isAuditClean(first)).toBe(false);
    // Pruned outputs are known from the archive `idem prune` wrote.
    const writer = new ArchiveWriter(fx.config.journal.archiveDir, Date.now());
    try {
      const pruned = await fx.journal.maintenance.prune({
        before: Date.now() + 60_000,
        archive: (entry) => writer.write(entry),
        actor: "test",
      });
      expect(pruned.outputs).toBe(5);
    } finally {
      writer.close();
    }
    expect((await audit()).unknownKeys.map((u) => u.key)).toEqual(["job-3/7"]);
    // Without the archive either, every key at the branch is unknown (a journal that lost them).
    rmSync(fx.config.journal.archiveDir, { recursive: true });
    expect((await audit()).unknownKeys.map((u) => u.key)).toEqual([
      "job-0/0",
      "job-1/0",
      "job-2/0",
      "job-3/0",
      "job-3/7",
      "job-4/0",
    ]);
  });
});
