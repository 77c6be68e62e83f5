import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { ManualClock } from "@idem/schema";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { idem, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.remove());

const DAY = 86_400_000;

/** Records `n` outputs with no effects at `at` and interprets them to done. */
async function recordDone(path: string, ids: string[], at: number): Promise<void> {
  const clock = new ManualClock(at);
  const j = await openSqliteJournal(path, { clock });
  try {
    for (const jobId of ids) {
      await j.outputs.record(
        { jobId, agent: "writer", effects: [] },
        { source: "cli", targets: [] },
      );
      const claim = await j.runs.claim({ owner: "test", leaseMs: 60_000, maxLeaseExpiries: 5 });
      if (!claim) throw new Error("no claim");
      await j.runs.complete(claim.lease);
    }
  } finally {
    await j.close();
  }
}

describe("idem backup", () => {
  it("copies a journal that another connection is writing, and refuses to overwrite without --force", async () => {
    const path = join(ws.dir, ".idem/journal.db");
    const live = await openSqliteJournal(path);
    try {
      for (let i = 0; i < 20; i++)
        await live.outputs.record(
          { jobId: `job-${i}`, agent: "writer", effects: [] },
          { source: "cli", targets: [] },
        );
      const file = join(ws.dir, "copy.db");
      const r = await idem(["backup", file, "--json", "--config", ws.config]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).file).toBe(file);
      const copy = await openSqliteJournal(file, { readonly: true });
      expect((await copy.status()).outputs).toBe(20);
      await copy.close();

      const again = await idem(["backup", file, "--config", ws.config]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("--force");
      await live.outputs.record(
        { jobId: "job-20", agent: "writer", effects: [] },
        { source: "cli", targets: [] },
      );
      const forced = await idem(["backup", file, "--force", "--config", ws.config]);
      expect(forced.code, forced.stderr).toBe(0);
      const copy2 = await openSqliteJournal(file, { readonly: true });
      expect((await copy2.status()).outputs).toBe(21);
      await copy2.close();
      expect(readdirSync(ws.dir).filter((f) => f.includes("partial"))).toEqual([]);
    } finally {
      await live.close();
    }
  });
});

describe("idem prune", () => {
  it("does nothing and says so when journal.retentionDays is not set", async () => {
    rmSync(join(ws.dir, ".idem"), { recursive: true });
    const r = await idem(["prune", "--config", ws.config]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("retentionDays is not set");
    expect(existsSync(join(ws.dir, ".idem/journal.db"))).toBe(false);
  });

  it("refuses to run when retention is inside the redelivery horizon (exit 3)", async () => {
    ws.writeConfig({ journal: { retentionDays: 0.001 } });
    const r = await idem(["prune", "--config", ws.config]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("journal.retentionDays");
  });

  it("counts with --dry-run, then archives old outputs as JSONL that show --archive reads, keeping recent ones", async () => {
    ws.writeConfig({ journal: { retentionDays: 7 } });
    const path = join(ws.dir, ".idem/journal.db");
    await recordDone(path, ["old-1", "old-2", "old-3"], Date.now() - 30 * DAY);
    await recordDone(path, ["new-1"], Date.now() - DAY);

    const bytes = readFileSync(path);
    const dry = await idem(["prune", "--dry-run", "--json", "--config", ws.config]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, outputs: 3, runs: 3 });
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(existsSync(join(ws.dir, ".idem/archive"))).toBe(false);

    const r = await idem(["prune", "--json", "--config", ws.config]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { outputs: number; archive: string };
    expect(result.outputs).toBe(3);
    const lines = readFileSync(result.archive, "utf8").trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).output.jobId)).toEqual(["old-1", "old-2", "old-3"]);

    const j = await openSqliteJournal(path);
    expect((await j.outputs.list()).map((o) => o.jobId)).toEqual(["new-1"]);
    await j.close();

    const shown = await idem(["show", "old-2", "--archive", "--json"], { cwd: ws.dir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ archived: true, output: { jobId: "old-2" } });

    const again = await idem(["prune", "--json", "--config", ws.config]);
    expect(JSON.parse(again.stdout)).toMatchObject({ outputs: 0, archive: null });
  });

  it("keeps an old output whose run is still active", async () => {
    ws.writeConfig({ journal: { retentionDays: 7 } });
    const path = join(ws.dir, ".idem/journal.db");
    const j = await openSqliteJournal(path, { clock: new ManualClock(Date.now() - 30 * DAY) });
    await j.outputs.record(
      { jobId: "pending-1", agent: "writer", effects: [] },
      { source: "cli", targets: [] },
    );
    await j.close();
    const r = await idem(["prune", "--json", "--config", ws.config]);
    expect(JSON.parse(r.stdout).outputs).toBe(0);
  });
});
