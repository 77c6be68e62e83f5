import { isIdemError, ManualClock } from "@idem/schema";
import { ignoreServerShutdown } from "@idem/testing";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EffectState, JournalStore } from "../../src/index.js";
import { ACTIVITY_SQL as POSTGRES_ACTIVITY } from "../../src/store/postgres/status.js";
import { ACTIVITY_SQL as SQLITE_ACTIVITY } from "../../src/store/sqlite/status.js";
import { output } from "../helpers.js";
import { STORES, type StoreFactory } from "./stores.js";

const MINUTE = 60_000;
/** A whole minute, so that the buckets of a window starting here are the clock's minutes. */
const T0 = 28_333_334 * MINUTE;
const CLAIM = { owner: "test", leaseMs: 600_000, maxLeaseExpiries: 3 };
const WINDOW = { since: T0, until: T0 + 3 * MINUTE, bucketMs: MINUTE };

/** The plan of `activity`'s statement on a store (PostgreSQL: seq scans off). */
async function plan(factory: StoreFactory, j: JournalStore): Promise<string> {
  const w = { since: T0, width: MINUTE, n: 3, until: T0 + 3 * MINUTE };
  if (factory.name === "sqlite") {
    const db = new Database(j.location, { readonly: true });
    try {
      const rows = db.prepare(`EXPLAIN QUERY PLAN ${SQLITE_ACTIVITY}`).all(w) as {
        detail: string;
      }[];
      return rows.map((r) => r.detail).join("\n");
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: j.location });
  client.on("error", ignoreServerShutdown);
  await client.connect();
  try {
    // An empty table is read sequentially whatever its indexes: this asks whether one can serve.
    await client.query("SET enable_seqscan = off");
    const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${POSTGRES_ACTIVITY}`, [
      w.since,
      w.width,
      w.n,
      w.until,
    ]);
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  } finally {
    await client.end();
  }
}

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's activity per bucket on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: JournalStore[] = [];
    const store = async () => {
      const clock = new ManualClock(T0);
      const journal = (await factory.open({ clock })) as unknown as JournalStore;
      open.push(journal);
      return { journal, clock };
    };
    beforeAll(() => {
      factory = make();
    });
    afterAll(async () => {
      for (const s of open) await s.close();
      await factory.teardown();
    });

    /** Records `jobId` at `at`, claims its run and settles its one effect `state` at `settledAt`. */
    const interpret = async (
      t: { journal: JournalStore; clock: ManualClock },
      jobId: string,
      at: number,
      settled?: { state: EffectState; at: number },
    ) => {
      t.clock.set(at);
      await t.journal.outputs.record(output(jobId), { source: "cli", targets: [] });
      if (!settled) return;
      const claim = await t.journal.runs.claim(CLAIM);
      if (claim?.lease.jobId !== jobId) throw new Error(`no claim of ${jobId}`);
      await t.journal.ledger.intend(claim.lease, {
        key: `${jobId}/0`,
        idx: 0,
        kind: "git.commit",
        specHash: "h",
      });
      t.clock.set(settled.at);
      await t.journal.ledger.settle(claim.lease, `${jobId}/0`, settled.state, { commit: "c" });
      if (settled.state === "applied") await t.journal.runs.complete(claim.lease);
    };

    it("answers every bucket of the window, zero on an empty journal", async () => {
      const t = await store();
      expect(await t.journal.activity(WINDOW)).toEqual({
        ...WINDOW,
        outputs: [0, 0, 0],
        applied: [0, 0, 0],
      });
    });

    it("counts outputs by when they were recorded and effects by when they were settled applied, in the window only", async () => {
      const t = await store();
      await interpret(t, "before", T0 - 1, { state: "applied", at: T0 - 1 });
      await interpret(t, "a", T0, { state: "applied", at: T0 + MINUTE + 5 });
      await interpret(t, "b", T0 + 59_999, { state: "applied", at: T0 + 2 * MINUTE });
      await interpret(t, "c", T0 + MINUTE, { state: "present", at: T0 + MINUTE + 1 });
      await interpret(t, "d", T0 + MINUTE + 1, { state: "failed", at: T0 + MINUTE + 2 });
      // Recorded before the window, applied in its last minute.
      await interpret(t, "f", T0 - MINUTE, { state: "applied", at: T0 + 3 * MINUTE - 1 });
      await interpret(t, "after", T0 + 3 * MINUTE, { state: "applied", at: T0 + 3 * MINUTE });
      // Recorded last, so that every claim above took the run it meant to; never interpreted.
      await interpret(t, "e", T0 + 2 * MINUTE + 10);
      expect(await t.journal.activity(WINDOW)).toEqual({
        ...WINDOW,
        outputs: [2, 2, 1],
        applied: [0, 1, 2],
      });
      // A window that does not fall on the minutes: buckets start at `since`, the last is cut short.
      expect(
        await t.journal.activity({ since: T0 + 30_000, until: T0 + 150_000, bucketMs: MINUTE }),
      ).toEqual({
        since: T0 + 30_000,
        until: T0 + 150_000,
        bucketMs: MINUTE,
        outputs: [3, 1],
        applied: [1, 1],
      });
      expect(
        await t.journal.activity({
          since: T0 - MINUTE,
          until: T0 + 4 * MINUTE,
          bucketMs: 3_600_000,
        }),
      ).toMatchObject({ outputs: [8], applied: [5] });
    });

    it("refuses an empty, reversed, fractional or too long window before any query", async () => {
      const t = await store();
      for (const w of [
        { since: T0, until: T0, bucketMs: MINUTE },
        { since: T0, until: T0 - 1, bucketMs: MINUTE },
        { since: T0, until: T0 + MINUTE, bucketMs: 0 },
        { since: T0 + 0.5, until: T0 + MINUTE, bucketMs: MINUTE },
        { since: T0, until: T0 + 8 * 24 * 60 * MINUTE, bucketMs: MINUTE },
      ]) {
        await expect(t.journal.activity(w)).rejects.toSatisfy((e) =>
          isIdemError(e, "INVALID_INPUT"),
        );
      }
    });

    it("counts outputs through outputs_recorded_at and applied effects through effects_applied, never the whole table", async () => {
      const t = await store();
      const p = await plan(factory, t.journal);
      expect(p).toMatch(/outputs_recorded_at/);
      expect(p).toMatch(/effects_applied/);
      expect(p).not.toMatch(/^SCAN (outputs|effects)$|Seq Scan/m);
    });
  },
);
