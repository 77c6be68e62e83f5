import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentOutput } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_EVENTS as E, openSqliteJournal } from "../../src/index.js";
import { another, type FullStore, full } from "./full-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  summary: `wrote ${jobId}`,
  effects: [
    { kind: "file.write", root: "out", path: `${jobId}.txt`, content: jobId },
    { kind: "http.request", target: "hooks", method: "POST", path: "/x", body: { jobId } },
  ],
});
const CLAIM = { owner: "test", leaseMs: 600_000, maxLeaseExpiries: 3 };

/** Records `jobId` and runs its first generation to done (no effect written: an empty ledger). */
async function recordDone(j: FullStore, jobId: string): Promise<void> {
  await j.outputs.record(out(jobId), { source: "cli", targets: ["root:out"] });
  const c = await j.runs.claim(CLAIM);
  if (!c) throw new Error("claim");
  await j.runs.complete(c.lease);
}

describe.each(STORES.map((make) => [make().name, make] as const))(
  "a replay's filter and lineage on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: FullStore[] = [];
    const store = async () => {
      const s = full(await factory.open());
      open.push(s);
      return s;
    };
    beforeAll(() => {
      factory = make();
    });
    afterAll(async () => {
      for (const s of open) await s.close();
      await factory.teardown();
    });

    it("records the filter and the lineage with the new generation, and in its run.replayed event", async () => {
      const j = await store();
      await recordDone(j, "a");
      const created = await j.runs.replay(
        { jobIds: ["a"] },
        {
          actor: "oncall",
          reason: "hooks receiver lost the data (INC-7)",
          selection: { agent: "writer", since: 1_000 },
          only: { kinds: ["http.request"], targets: ["hooks"], repos: [] },
        },
      );
      const only = { kinds: ["http.request"], targets: ["hooks"] };
      const lineage = {
        actor: "oncall",
        reason: "hooks receiver lost the data (INC-7)",
        selection: { agent: "writer", since: 1_000 },
        only,
        replaysGeneration: 1,
      };
      expect(created.map((r) => [r.generation, r.only, r.replay])).toEqual([[2, only, lineage]]);
      // Read back by every read: another connection, as another host would.
      const other = full(await another(factory, j));
      open.push(other);
      const runs = await other.runs.forJob("a");
      expect(runs.map((r) => [r.generation, r.only, r.replay])).toEqual([
        [1, null, null],
        [2, only, lineage],
      ]);
      expect((await other.runs.latest("a"))?.replay).toEqual(lineage);
      const events = await other.events.list({ jobId: "a", type: E.RUN_REPLAYED });
      expect(events.map((e) => [e.actor, e.data])).toEqual([
        ["oncall", { generation: 2, forceUnprobeable: false, ...lineage }],
      ]);
    });

    it("carries the filter to the interpreter's claim, and a run with a filter is done when its own effects are settled", async () => {
      const j = await store();
      await recordDone(j, "a");
      await j.runs.replay({ all: true }, { actor: "oncall", only: { roots: ["out"] } });
      const c = await j.runs.claim(CLAIM);
      expect(c?.run).toMatchObject({ generation: 2, only: { roots: ["out"] } });
      expect(c?.run.replay).toMatchObject({ reason: null, selection: { all: true } });
      if (!c) throw new Error("claim");
      // Only effect 0 is in the filter: settling it is enough for done.
      await j.ledger.intend(c.lease, { key: "a/0", idx: 0, kind: "file.write", specHash: "h" });
      await j.ledger.settle(c.lease, "a/0", "applied", {});
      await j.runs.complete(c.lease);
      expect((await j.ledger.forJob("a", 2)).map((e) => e.key)).toEqual(["a/0"]);
      expect((await j.runs.latest("a"))?.state).toBe("done");
    });

    it("chains lineage: each generation names the one it replays; no filter is null, empty lists drop", async () => {
      const j = await store();
      await recordDone(j, "a");
      await j.runs.replay({ jobIds: ["a"] }, { actor: "one", reason: "first", only: {} });
      const c = await j.runs.claim(CLAIM);
      if (!c) throw new Error("claim");
      await j.runs.complete(c.lease);
      await j.runs.replay(
        { jobIds: ["a"] },
        { actor: "two", reason: "second", only: { kinds: [], repos: ["site"] } },
      );
      const runs = await j.runs.forJob("a");
      expect(runs.map((r) => [r.generation, r.replay?.replaysGeneration, r.only])).toEqual([
        [1, undefined, null],
        [2, 1, null],
        [3, 2, { repos: ["site"] }],
      ]);
      expect(runs.map((r) => r.replay?.reason)).toEqual([undefined, "first", "second"]);
      // The selection defaults to the one replayed when the caller names none.
      expect(runs[1]?.replay?.selection).toEqual({ jobIds: ["a"] });
    });

    it("gives a filtered generation only to an output whose latest run is done, never over a dead one", async () => {
      const j = await store();
      await recordDone(j, "a");
      await j.outputs.record(out("b"), { source: "cli", targets: ["root:out"] });
      const c = await j.runs.claim(CLAIM);
      if (!c) throw new Error("claim");
      await j.runs.markDead(c.lease, { class: "conflict", error: "the patch does not apply" });
      const created = await j.runs.replay(
        { all: true },
        { actor: "oncall", reason: "r", only: { roots: ["out"] } },
      );
      expect(created.map((r) => [r.jobId, r.generation])).toEqual([["a", 2]]);
      expect((await j.runs.latest("b"))?.state).toBe("dead");
      // Without a filter the dead one gets its generation (every effect decided again).
      const again = await j.runs.replay({ jobIds: ["b"] }, { actor: "oncall", reason: "r" });
      expect(again.map((r) => [r.jobId, r.generation, r.only])).toEqual([["b", 2, null]]);
    });

    it("orders a filtered generation on the targets it is given only: it neither waits behind nor holds up the others", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: ["repo:site@main", "root:out"] });
      const c = await j.runs.claim(CLAIM);
      if (!c) throw new Error("claim");
      await j.runs.complete(c.lease);
      // b holds repo:site@main, recorded before the replay of a.
      await j.outputs.record(out("b"), { source: "cli", targets: ["repo:site@main"] });
      const held = await j.runs.claim(CLAIM);
      expect(held?.run.jobId).toBe("b");
      const [run] = await j.runs.replay(
        { jobIds: ["a"] },
        { actor: "oncall", only: { roots: ["out"] }, targets: { a: ["root:out"] } },
      );
      expect(run?.targets).toEqual(["root:out"]);
      // a's generation 2 is claimable while b still holds the repository.
      const next = await j.runs.claim(CLAIM);
      expect([next?.run.jobId, next?.run.generation]).toEqual(["a", 2]);
      // A generation without a filter after it (a replay, a dlq retry) orders on every target again.
      if (next) await j.runs.complete(next.lease);
      const [all] = await j.runs.replay({ jobIds: ["a"] }, { actor: "oncall" });
      expect(all?.targets).toEqual(["repo:site@main", "root:out"]);
    });

    it("stores the reason and the actor as given, quotes and newlines included", async () => {
      const j = await store();
      await recordDone(j, "a");
      const reason = `restored "site" from backup\n-- ; DROP TABLE runs; 'x'`;
      await j.runs.replay({ all: true }, { actor: "o'brien", reason });
      const run = await j.runs.latest("a");
      expect(run?.replay).toMatchObject({ actor: "o'brien", reason });
    });
  },
);

describe("a journal from before the filter and lineage columns", () => {
  it("reads its runs read-only (no migration) with no filter and no lineage", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-lineage-v1-"));
    try {
      const path = join(dir, "journal.db");
      copyFileSync(
        join(import.meta.dirname, "../../../../test/fixtures/journals/v1/basic.db"),
        path,
      );
      const j = await openSqliteJournal(path, { readonly: true });
      try {
        const outputs = await j.outputs.list();
        expect(outputs.length).toBeGreaterThan(0);
        for (const o of outputs) {
          const runs = await j.runs.forJob(o.jobId);
          expect(runs.length).toBeGreaterThan(0);
          for (const r of runs) expect([r.only, r.replay]).toEqual([null, null]);
        }
      } finally {
        await j.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
