import type { ReplaySelection } from "@idem/journal";
import { ManualClock } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalStore } from "../../src/index.js";
import { CLAIM, output } from "../helpers.js";
import { STORES, type StoreFactory } from "./stores.js";

/**
 * Each test on a fresh journal of each store, with a manual clock: what `since` selects is the
 * recording time, which the host stamps on both stores.
 */
describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: JournalStore[] = [];
    const store = async () => {
      const clock = new ManualClock();
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

    describe("outputs.page", () => {
      it("reads page after page exactly what select reads, for every kind of selection", async () => {
        const t = await store();
        for (let i = 0; i < 23; i++) {
          t.clock.advance(1000);
          await t.journal.outputs.record(
            { ...output(`j${i}`), agent: i % 3 === 0 ? "reviewer" : "writer" },
            { source: "cli", targets: [] },
          );
        }
        for (let i = 0; i < 5; i++) {
          const claim = await t.journal.runs.claim(CLAIM);
          if (!claim) throw new Error("no claim");
          await t.journal.runs.complete(claim.lease);
        }
        const selections: ReplaySelection[] = [
          { all: true },
          { agent: "reviewer" },
          { since: t.clock.now() - 10_000 },
          { state: "done" },
          { state: "pending", agent: "writer" },
          { jobIds: ["j20", "j3", "j7", "j11", "missing"] },
          { jobIds: [] },
          {},
        ];
        for (const selection of selections) {
          const all = await t.journal.outputs.select(selection);
          for (const limit of [1, 4, 100]) {
            const paged = [];
            for (let afterSeq = 0; ; ) {
              const page = await t.journal.outputs.page(selection, { afterSeq, limit });
              expect(page.length).toBeLessThanOrEqual(limit);
              paged.push(...page);
              if (page.length < limit) break;
              afterSeq = page[page.length - 1]?.seq ?? afterSeq;
            }
            expect(paged).toEqual(all);
            // Newest first: the same outputs, the other way round.
            const back = [];
            for (let beforeSeq = Number.MAX_SAFE_INTEGER; ; ) {
              const page = await t.journal.outputs.page(selection, { beforeSeq, limit });
              expect(page.length).toBeLessThanOrEqual(limit);
              back.push(...page);
              if (page.length < limit) break;
              beforeSeq = page[page.length - 1]?.seq ?? beforeSeq;
            }
            expect(back).toEqual([...all].reverse());
          }
        }
        expect((await t.journal.outputs.select({ agent: "reviewer" })).map((o) => o.jobId)).toEqual(
          ["j0", "j3", "j6", "j9", "j12", "j15", "j18", "j21"],
        );
        expect(await t.journal.outputs.page({ all: true }, { afterSeq: 0, limit: 0 })).toEqual([]);
      });

      it("selects, pages and replays a selection of more job IDs than SQLite binds in one statement", async () => {
        const t = await store();
        for (let i = 0; i < 30; i++) {
          await t.journal.outputs.record(output(`j${i}`), { source: "cli", targets: [] });
        }
        // 40,000 IDs (over SQLite's 32,766 bound parameters), the recorded ones among them twice.
        const ids = [
          ...Array.from({ length: 39_940 }, (_, i) => `missing-${i}`),
          ...Array.from({ length: 30 }, (_, i) => `j${29 - i}`),
          ...Array.from({ length: 30 }, (_, i) => `j${i}`),
        ];
        const expected = Array.from({ length: 30 }, (_, i) => `j${i}`);
        expect((await t.journal.outputs.select({ jobIds: ids })).map((o) => o.jobId)).toEqual(
          expected,
        );
        const paged = [];
        for (let afterSeq = 0; ; ) {
          const page = await t.journal.outputs.page({ jobIds: ids }, { afterSeq, limit: 7 });
          paged.push(...page);
          if (page.length < 7) break;
          afterSeq = page[page.length - 1]?.seq ?? afterSeq;
        }
        expect(paged.map((o) => o.jobId)).toEqual(expected);
        const newest = await t.journal.outputs.page(
          { jobIds: ids },
          { beforeSeq: Number.MAX_SAFE_INTEGER, limit: 7 },
        );
        expect(newest.map((o) => o.jobId)).toEqual([...expected].reverse().slice(0, 7));
        for (let i = 0; i < 30; i++) {
          const claim = await t.journal.runs.claim(CLAIM);
          if (!claim) throw new Error("no claim");
          await t.journal.runs.complete(claim.lease);
        }
        const replayed = await t.journal.runs.replay({ jobIds: ids }, { actor: "test" });
        expect(replayed.map((r) => [r.jobId, r.generation])).toEqual(expected.map((id) => [id, 2]));
      });
    });
  },
);
