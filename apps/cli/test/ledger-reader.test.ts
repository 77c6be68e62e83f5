import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openJournal } from "@idem/journal";
import { describe, expect, it } from "vitest";
import { readLedgers } from "../src/ops/ledger-reader.js";

describe("readLedgers", () => {
  it("reads the same latest runs and ledgers in bulk as through the port, one output at a time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-ledgers-"));
    const journal = await openJournal(join(dir, "journal.db"), { synchronous: "OFF" });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 300; i++) {
        const jobId = `job-${i}`;
        ids.push(jobId);
        const effects = [
          { kind: "file.write" as const, root: "out", path: `${i}.txt`, content: "x" },
          { kind: "file.write" as const, root: "out", path: `${i}b.txt`, content: "y" },
        ];
        await journal.record({ jobId, agent: "w", effects }, { source: "cli", targets: [] });
        if (i % 3 === 0) continue; // left pending, no ledger
        const claim = await journal.claim({ owner: "t", leaseMs: 60_000, maxLeaseExpiries: 5 });
        if (!claim) throw new Error("no claim");
        for (const idx of [0, 1]) {
          const key = `${claim.run.jobId}/${idx}`;
          await journal.intend(claim.lease, { key, idx, kind: "file.write", specHash: "h" });
          if (i % 3 === 1) await journal.settle(claim.lease, key, "applied", { bytes: 1 });
        }
        if (i % 3 === 1) await journal.complete(claim.lease);
        else await journal.dead(claim.lease, { class: "logic", error: "test" });
      }
      await journal.replay({ jobIds: ids.filter((_, i) => i % 6 === 1) }, { actor: "t" });
      const bulk = await readLedgers(journal, ids);
      const one = await readLedgers(journal, ids.slice(0, 100));
      for (const id of ids) {
        const run = await journal.latestRun(id);
        expect(bulk.latest(id)).toEqual({ generation: run?.generation, state: run?.state });
        expect(byGeneration(bulk.ledger(id))).toEqual(await journal.effects(id));
      }
      for (const id of ids.slice(0, 100)) {
        expect(one.ledger(id)).toEqual(byGeneration(bulk.ledger(id)));
      }
    } finally {
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function byGeneration<T extends { generation: number; idx: number }>(xs: T[]): T[] {
  return [...xs].sort((a, b) => a.generation - b.generation || a.idx - b.idx);
}
