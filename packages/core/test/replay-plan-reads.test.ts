import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type JournalStore, openSqliteJournal } from "@idem/journal";
import { describe, expect, it } from "vitest";

/** The reads a replay plan makes: `runs.latestOf` and `ledger.ofJobs`, looked up as the plan does. */
async function readLatestRuns(journal: JournalStore, ids: readonly string[]) {
  const latest = await journal.runs.latestOf(ids);
  return (jobId: string) => latest.get(jobId);
}
async function readEffectLedgers(journal: JournalStore, ids: readonly string[]) {
  const ledgers = await journal.ledger.ofJobs(ids);
  return (key: string) => ledgers.get(key) ?? [];
}

describe("the replay plan's bulk reads of latest runs and ledgers", () => {
  it("reads the same latest runs and ledgers in bulk as through the port, one output at a time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-ledgers-"));
    const journal = await openSqliteJournal(join(dir, "journal.db"), { synchronous: "OFF" });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 300; i++) {
        const jobId = `job-${i}`;
        ids.push(jobId);
        const effects = [
          { kind: "file.write" as const, root: "out", path: `${i}.txt`, content: "x" },
          { kind: "file.write" as const, root: "out", path: `${i}b.txt`, content: "y" },
        ];
        await journal.outputs.record(
          { jobId, agent: "w", effects },
          { source: "cli", targets: [] },
        );
        if (i % 3 === 0) continue; // left pending, no ledger
        const claim = await journal.runs.claim({
          owner: "t",
          leaseMs: 60_000,
          maxLeaseExpiries: 5,
        });
        if (!claim) throw new Error("no claim");
        for (const idx of [0, 1]) {
          const key = `${claim.run.jobId}/${idx}`;
          await journal.ledger.intend(claim.lease, { key, idx, kind: "file.write", specHash: "h" });
          if (i % 3 === 1) await journal.ledger.settle(claim.lease, key, "applied", { bytes: 1 });
        }
        if (i % 3 === 1) await journal.runs.complete(claim.lease);
        else await journal.runs.markDead(claim.lease, { class: "logic", error: "test" });
      }
      await journal.runs.replay({ jobIds: ids.filter((_, i) => i % 6 === 1) }, { actor: "t" });
      // 300 outputs, and a subset of 100: the plan reads only the outputs it selected.
      const [bulkRun, bulkLedger] = [
        await readLatestRuns(journal, ids),
        await readEffectLedgers(journal, ids),
      ];
      const [oneRun, oneLedger] = [
        await readLatestRuns(journal, ids.slice(0, 100)),
        await readEffectLedgers(journal, ids.slice(0, 100)),
      ];
      for (const [n, id] of ids.entries()) {
        const run = await journal.runs.latest(id);
        const latest = run && { generation: run.generation, state: run.state };
        expect(bulkRun(id)).toEqual(latest);
        if (n < 100) expect(oneRun(id)).toEqual(latest);
        for (const idx of [0, 1]) {
          const key = `${id}/${idx}`;
          const history = (await journal.ledger.history(key)).map((r) => ({
            generation: r.generation,
            state: r.state,
          }));
          expect(byGeneration(bulkLedger(key))).toEqual(byGeneration(history));
          if (n < 100) expect(byGeneration(oneLedger(key))).toEqual(byGeneration(history));
        }
      }
      expect(bulkLedger("job-1/0").length).toBeGreaterThan(0);
    } finally {
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function byGeneration<T extends { generation: number }>(xs: readonly T[]): T[] {
  return [...xs].sort((a, b) => a.generation - b.generation);
}
