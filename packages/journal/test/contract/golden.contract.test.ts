import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ignoreServerShutdown, type PostgresHandle, startPostgres } from "@idem/testing";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { copyJournal, type JournalStore, openSqliteJournal } from "../../src/index.js";
import { PostgresJournalStore } from "../../src/store/postgres/postgres-journal-store.js";

/** Golden journals: SQLite files written once by an old version, never edited (test/fixtures). */
const V1 = join(import.meta.dirname, "../../../../test/fixtures/journals/v1");
const GOLDEN = readdirSync(V1).filter((f) => f.endsWith(".db"));

/** A golden journal opened on one store, with a raw read of its per-target order. */
interface Opened {
  j: JournalStore;
  activeTargets(): Promise<{ target: string; run_id: number }[]>;
  close(): Promise<void>;
}

/** A copy of the golden file in a temp dir (the committed one is never opened). */
function goldenCopy(file: string): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "idem-golden-"));
  const path = join(dir, file);
  copyFileSync(join(V1, file), path);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** SQLite: today's code opens the old file itself (its migrations run on open). */
async function onSqlite(file: string): Promise<Opened> {
  const copy = goldenCopy(file);
  const j = await openSqliteJournal(copy.path);
  return {
    j,
    activeTargets: async () =>
      j.database.prepare("SELECT target, run_id FROM active_targets").all() as {
        target: string;
        run_id: number;
      }[],
    close: async () => {
      await j.close();
      copy.remove();
    },
  };
}

let server: PostgresHandle | undefined;
let databases = 0;

/**
 * PostgreSQL: a journal on PostgreSQL is never an old file, it is made by `idem journal copy`
 * from one. The old file is opened by today's SQLite code (migrated), copied with the copy's own
 * code into an empty disposable database, verified, and the reads run on the PostgreSQL store.
 */
async function onPostgres(file: string): Promise<Opened> {
  server ??= await startPostgres();
  const url = await server.createDatabase(`golden_${++databases}`);
  const copy = goldenCopy(file);
  try {
    await (await openSqliteJournal(copy.path)).close();
    const report = await copyJournal({ from: copy.path, to: url });
    expect(report.tables.filter((t) => !t.equal)).toEqual([]);
    expect(report.verified).toBe(true);
  } finally {
    copy.remove();
  }
  const j = await PostgresJournalStore.open(url);
  const raw = new pg.Client({ connectionString: url });
  raw.on("error", ignoreServerShutdown);
  await raw.connect();
  return {
    j,
    activeTargets: async () =>
      (await raw.query("SELECT target, run_id FROM active_targets")).rows.map(
        (r: { target: string; run_id: string }) => ({ target: r.target, run_id: Number(r.run_id) }),
      ),
    close: async () => {
      await raw.end();
      await j.close();
    },
  };
}

describe.each([
  ["sqlite", onSqlite],
  ["postgres (copied from the golden file by idem journal copy's code)", onPostgres],
] as const)("golden journals on %s", (_name, open) => {
  afterAll(async () => {
    await server?.stop();
    server = undefined;
  });

  it.each(GOLDEN)("reads %s unchanged with today's code, and its history goes on", async (file) => {
    const { j, activeTargets, close } = await open(file);
    try {
      expect(await j.maintenance.integrity()).toEqual([]);
      const s = await j.status();
      expect(s).toMatchObject({ outputs: 3, rejections: 1, deadLetters: 1 });
      expect(s.runs).toMatchObject({ done: 1, dead: 1, pending: 1 });
      expect((await j.outputs.get("done-1"))?.output.summary).toBe("one");
      expect((await j.outputs.rejections("done-1")).length).toBe(1);
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
      expect(await activeTargets()).toEqual([{ target: "repo:site@main", run_id: 3 }]);
      // The history goes on: the pending run is claimable and a replay adds generation 2.
      const c = await j.runs.claim({ owner: "today", leaseMs: 1000, maxLeaseExpiries: 5 });
      expect(c?.output.jobId).toBe("pending-3");
      expect((await j.runs.replay({ jobIds: ["done-1"] }, { actor: "test" }))[0]?.generation).toBe(
        2,
      );
      // A new record goes after the copied ones (the sequences were set past the copied ids).
      const next = await j.outputs.record(
        { jobId: "new-6", agent: "writer", effects: [] },
        { source: "cli", targets: [] },
      );
      expect(next).toMatchObject({ status: "recorded", seq: 4 });
    } finally {
      await close();
    }
  });
});
