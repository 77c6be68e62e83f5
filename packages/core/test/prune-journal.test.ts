import { existsSync, readFileSync } from "node:fs";
import { type JournalStore, openSqliteJournal } from "@idem/journal";
import { type Config, isIdemError, ManualClock, parseConfig } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { findInArchive } from "../src/archive/find-in-archive.js";
import { pruneCutoff, pruneJournal } from "../src/archive/prune-journal.js";
import { showArchivedJob } from "../src/show/show-job.js";

const DAY = 86_400_000;

function configIn(dir: string, journal: Record<string, unknown>): Config {
  const r = parseConfig({ journal }, { dir });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

/** Records outputs with no effects and completes their runs. */
async function recordDone(journal: JournalStore, ids: string[]): Promise<void> {
  for (const jobId of ids) {
    await journal.outputs.record(
      { jobId, agent: "writer", effects: [] },
      { source: "cli", targets: [] },
    );
    const claim = await journal.runs.claim({ owner: "test", leaseMs: 60_000, maxLeaseExpiries: 5 });
    if (!claim) throw new Error("no claim");
    await journal.runs.complete(claim.lease);
  }
}

describe("pruneCutoff", () => {
  it("has no cutoff when journal.retentionDays is not set", async () => {
    await using dir = await tempDir("idem-prune-");
    expect(pruneCutoff(configIn(dir.path, {}), Date.now())).toBeUndefined();
  });

  it("refuses with INVARIANT_VIOLATION naming the key when retention is inside the redelivery horizon", async () => {
    await using dir = await tempDir("idem-prune-");
    const config = configIn(dir.path, { retentionDays: 0.001 });
    let error: unknown;
    try {
      pruneCutoff(config, Date.now());
    } catch (e) {
      error = e;
    }
    expect(isIdemError(error, "INVARIANT_VIOLATION")).toBe(true);
    expect((error as Error).message).toContain("journal.retentionDays");
  });
});

describe("pruneJournal", () => {
  it("counts when dry, then archives old outputs as JSONL that showArchivedJob reads, keeping recent ones", async () => {
    await using dir = await tempDir("idem-prune-");
    const config = configIn(dir.path, { retentionDays: 7 });
    const clock = new ManualClock(Date.now() - 30 * DAY);
    const old = await openSqliteJournal(config.journal.path, { clock });
    await recordDone(old, ["old-1", "old-2", "old-3"]);
    await old.close();
    const journal = await openSqliteJournal(config.journal.path);
    try {
      await recordDone(journal, ["new-1"]);
      const now = Date.now();
      const dry = await pruneJournal(journal, { config, now, dryRun: true, actor: "test" });
      expect(dry).toMatchObject({ outputs: 3, runs: 3, archive: null, before: now - 7 * DAY });
      expect(existsSync(config.journal.archiveDir)).toBe(false);

      const report = await pruneJournal(journal, { config, now, actor: "test" });
      expect(report?.outputs).toBe(3);
      const lines = readFileSync(report?.archive as string, "utf8")
        .trim()
        .split("\n");
      expect(lines.map((l) => JSON.parse(l).output.jobId)).toEqual(["old-1", "old-2", "old-3"]);
      expect((await journal.outputs.list()).map((o) => o.jobId)).toEqual(["new-1"]);
      expect(findInArchive(config.journal.archiveDir, "old-2")?.output.jobId).toBe("old-2");
      expect(showArchivedJob(config.journal.archiveDir, "old-2")).toMatchObject({
        archived: true,
        output: { jobId: "old-2" },
      });
      expect(() => showArchivedJob(config.journal.archiveDir, "new-1")).toThrow(
        expect.objectContaining({ code: "NOT_FOUND" }),
      );

      const again = await pruneJournal(journal, { config, now, actor: "test" });
      expect(again).toMatchObject({ outputs: 0, archive: null });
    } finally {
      await journal.close();
    }
  });
});
