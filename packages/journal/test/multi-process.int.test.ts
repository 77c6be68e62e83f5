import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { openSqliteJournal } from "../src/index.js";

const run = promisify(execFile);
const WORKER = join(import.meta.dirname, "fixtures/claim-worker.mjs");

describe("SQLite only: processes sharing one journal file (PostgreSQL: test/contract claims from 4 stores, test/postgres/migrate)", () => {
  it("lets 4 processes create one new journal at once and claims every run exactly once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-mp-"));
    try {
      const path = join(dir, "new", "journal.db");
      const startAt = Date.now() + 700;
      const jobs = 150;
      // Every child ends before anything is checked or removed: one failing must not leave the
      // others writing into a folder being removed (which hid the failure behind ENOTEMPTY).
      const settled = await Promise.allSettled(
        [0, 1, 2, 3].map((i) =>
          run(process.execPath, [WORKER, path, String(startAt), String(jobs), `p${i}`]),
        ),
      );
      const failed = settled.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
      expect(failed).toEqual([]);
      const results = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      const claims = results.map((r) => JSON.parse(r.stdout) as string[]);
      const all = claims.flat().sort();
      expect(all).toEqual(Array.from({ length: jobs }, (_, i) => `job-${i}`).sort());
      expect(new Set(all).size).toBe(jobs);
      const journal = await openSqliteJournal(path);
      const s = await journal.status();
      expect(s.outputs).toBe(jobs);
      expect(s.runs.done).toBe(jobs);
      const recorded = await journal.events.list({ type: "output.recorded" });
      expect(recorded).toHaveLength(jobs);
      expect(await journal.maintenance.integrity()).toEqual([]);
      await journal.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
