import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { describe, expect, it } from "vitest";

const V1 = join(import.meta.dirname, "../fixtures/journals/v1");

describe("golden journals", () => {
  it.each(readdirSync(V1).filter((f) => f.endsWith(".db")))(
    "opens %s with today's code and reads it unchanged",
    async (file) => {
      const dir = mkdtempSync(join(tmpdir(), "idem-golden-"));
      try {
        const path = join(dir, file);
        copyFileSync(join(V1, file), path);
        const j = await openSqliteJournal(path);
        expect(await j.maintenance.integrity()).toEqual([]);
        const s = await j.status();
        expect(s).toMatchObject({ outputs: 3, rejections: 1, deadLetters: 1 });
        expect(s.runs).toMatchObject({ done: 1, dead: 1, pending: 1 });
        expect((await j.outputs.get("done-1"))?.output.summary).toBe("one");
        expect((await j.ledger.forJob("done-1"))[0]).toMatchObject({
          state: "applied",
          detail: { commit: "c1" },
        });
        expect((await j.runs.latest("dead-2"))?.class).toBe("conflict");
        // Migration 0004 carried the job's input over to job_inputs.
        expect(await j.jobs.get("queued-4")).toMatchObject({
          state: "queued",
          input: { topic: "x" },
        });
        // Today's input hash is the one the old journal holds: the same job claims, not conflicts.
        const claimed = await j.jobs.claim(
          { jobId: "queued-4", agent: "writer", input: { topic: "x" } },
          { owner: "today", leaseMs: 1000 },
        );
        expect(claimed.status).toBe("acquired");
        // Migration 0003 carried the per-target order over: only the run in flight holds its target.
        expect(j.database.prepare("SELECT target, run_id FROM active_targets").all()).toEqual([
          { target: "repo:site@main", run_id: 3 },
        ]);
        // The history goes on: the pending run is claimable and a replay adds generation 2.
        const c = await j.runs.claim({ owner: "today", leaseMs: 1000, maxLeaseExpiries: 5 });
        expect(c?.output.jobId).toBe("pending-3");
        expect(
          (await j.runs.replay({ jobIds: ["done-1"] }, { actor: "test" }))[0]?.generation,
        ).toBe(2);
        await j.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
