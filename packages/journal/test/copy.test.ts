import { isIdemError } from "@idem/schema";
import { type PostgresHandle, startPostgres } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  COPY_TABLES,
  copyJournal,
  type JournalCopyReport,
  PostgresJournalStore,
  type SqliteJournalStore,
} from "../src/index.js";
import { fillJournal } from "./copy-fixture.js";
import { output, tempJournal } from "./helpers.js";

const code = async (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) => (isIdemError(e) ? e.code : String(e)),
  );

/** The reads an operator makes, as plain data to compare across stores. */
async function reads(
  j: SqliteJournalStore | PostgresJournalStore,
  jobIds: string[],
  keys: string[],
): Promise<unknown> {
  const per = [];
  for (const id of jobIds) {
    per.push({
      output: await j.outputs.get(id),
      runs: await j.runs.forJob(id),
      ledger: await j.ledger.forJob(id),
    });
  }
  return {
    per,
    status: await j.status(),
    history: await Promise.all(keys.map((k) => j.ledger.history(k))),
    rejections: await j.outputs.rejections(),
    list: await j.outputs.list(),
    deadLetters: await j.deadLetters.list(),
    events: await j.events.list(),
    jobs: await Promise.all([0, 1, 2, 3, 4].map((i) => j.jobs.get(`queued-${i}`))),
  };
}

const rowsOf = (r: JournalCopyReport, table: string) =>
  r.tables.find((t) => t.table === table)?.source.rows ?? Number.NaN;

describe("copyJournal (SQLite to PostgreSQL)", () => {
  let pg: PostgresHandle;
  let n = 0;
  const database = () => pg.createDatabase(`copy_${++n}`);
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await pg?.stop();
  });

  it("copies every table with every kind of row, equal counts and hashes, and PostgreSQL answers the same reads", async () => {
    await using t = await tempJournal();
    const filled = await fillJournal(t.journal, t.clock);
    const url = await database();
    const progress: string[] = [];
    const report = await copyJournal({
      from: t.path,
      to: url,
      batchSize: 4,
      onProgress: (p) => progress.push(`${p.phase}:${p.table}`),
    });
    expect(report.verified).toBe(true);
    for (const table of report.tables) {
      expect(table.source.rows, table.table).toBeGreaterThan(0);
      expect(table.target, table.table).toEqual(table.source);
      expect(table.inserted, table.table).toBe(table.source.rows);
    }
    expect(report.tables.map((x) => x.table)).toEqual(COPY_TABLES.map((x) => x.name));
    expect(progress).toContain("copy:outputs");
    expect(progress).toContain("verify:events");

    const copy = await PostgresJournalStore.open(url);
    try {
      expect(await reads(copy, filled.jobIds, filled.effectKeys)).toEqual(
        await reads(t.journal, filled.jobIds, filled.effectKeys),
      );
      // New writes continue after the copied ids: sequences were set past them.
      const before = await copy.status();
      const r = await copy.outputs.record(output("after-copy"), { source: "cli", targets: [] });
      expect(r.status).toBe("recorded");
      expect(r.status === "recorded" ? r.seq : 0).toBe(rowsOf(report, "outputs") + 1);
      expect((await copy.status()).outputs).toBe(before.outputs + 1);
    } finally {
      await copy.close();
    }
  });

  it("an interrupted copy run again inserts only what is missing and ends equal", async () => {
    await using t = await tempJournal();
    await fillJournal(t.journal, t.clock, 30);
    const url = await database();
    let batches = 0;
    const stopAt = (point: string, at: number) => (p: string) => {
      if (p === point && ++batches === at) throw new Error(`stopped at ${p}`);
    };
    // Stopped inside the third batch's transaction: that batch is rolled back.
    await expect(
      copyJournal({
        from: t.path,
        to: url,
        batchSize: 7,
        fault: stopAt("journal-copy.before-commit", 3),
      }),
    ).rejects.toThrow(/stopped/);
    batches = 0;
    // Stopped after the fifth committed batch (inside the second table).
    await expect(
      copyJournal({
        from: t.path,
        to: url,
        batchSize: 7,
        fault: stopAt("journal-copy.after-batch", 5),
      }),
    ).rejects.toThrow(/stopped/);
    const report = await copyJournal({ from: t.path, to: url, batchSize: 7 });
    expect(report.verified).toBe(true);
    const outputs = report.tables.find((x) => x.table === "outputs");
    // 2 batches of 7 survived the first run, the rest came with the second: none inserted now.
    expect(outputs?.inserted).toBe(0);
    const again = await copyJournal({ from: t.path, to: url, batchSize: 7 });
    expect(again.verified).toBe(true);
    expect(again.tables.every((x) => x.inserted === 0)).toBe(true);
    expect(again.tables).toEqual(report.tables.map((x) => ({ ...x, inserted: 0 })));
  });

  it("refuses a target that holds other data, and leaves it unchanged", async () => {
    await using t = await tempJournal();
    await fillJournal(t.journal, t.clock);
    const url = await database();
    const other = await PostgresJournalStore.open(url);
    try {
      await other.outputs.record(output("someone-else"), { source: "cli", targets: [] });
      const before = { status: await other.status(), events: await other.events.list() };
      expect(await code(copyJournal({ from: t.path, to: url }))).toBe("INVALID_STATE");
      await expect(copyJournal({ from: t.path, to: url })).rejects.toThrow(
        /outputs row \[1\] differs from the source's.*nothing was written/,
      );
      expect({ status: await other.status(), events: await other.events.list() }).toEqual(before);
    } finally {
      await other.close();
    }
  });

  it("refuses while a run's lease has not ended, naming its holder, and copies once it has", async () => {
    await using t = await tempJournal();
    const filled = await fillJournal(t.journal, t.clock);
    const url = await database();
    const held = copyJournal({ from: t.path, to: url, clock: t.clock });
    await expect(held).rejects.toThrow(
      /1 run\(s\) and 0 job\(s\) under leases.*held by test.*stop the interpreters and executors/,
    );
    expect(await code(copyJournal({ from: t.path, to: url, clock: t.clock }))).toBe("LOCKED");
    t.clock.set(filled.leaseUntil + 1);
    expect((await copyJournal({ from: t.path, to: url, clock: t.clock })).verified).toBe(true);
  });

  it("copies a replay's effect filter and lineage with its run", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: [] });
    const c = await t.journal.runs.claim({ owner: "t", leaseMs: 60_000, maxLeaseExpiries: 3 });
    if (!c) throw new Error("claim");
    await t.journal.runs.complete(c.lease);
    await t.journal.runs.replay(
      { jobIds: ["a"] },
      {
        actor: "oncall",
        reason: "site restored",
        selection: { agent: "writer" },
        only: { repos: ["site"] },
      },
    );
    const url = await database();
    expect((await copyJournal({ from: t.path, to: url })).verified).toBe(true);
    const copy = await PostgresJournalStore.open(url);
    try {
      const runs = await copy.runs.forJob("a");
      expect(runs[1]).toMatchObject({
        only: { repos: ["site"] },
        replay: { actor: "oncall", reason: "site restored", replaysGeneration: 1 },
      });
      expect(runs).toEqual(await t.journal.runs.forJob("a"));
    } finally {
      await copy.close();
    }
  });

  it("refuses a missing source file", async () => {
    expect(
      await code(
        copyJournal({ from: "/nonexistent/journal.db", to: "postgres://x@127.0.0.1:1/x" }),
      ),
    ).toBe("NOT_FOUND");
  });
});
