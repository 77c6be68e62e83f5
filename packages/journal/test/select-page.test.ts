import type { ReplaySelection } from "@idem/journal";
import { describe, expect, it } from "vitest";
import { CLAIM, output, tempJournal } from "./helpers.js";

describe("SqliteJournalStore selectPage", () => {
  it("reads page after page exactly what select reads, for every kind of selection", async () => {
    await using t = await tempJournal();
    for (let i = 0; i < 23; i++) {
      t.clock.advance(1000);
      await t.journal.record(
        { ...output(`j${i}`), agent: i % 3 === 0 ? "reviewer" : "writer" },
        { source: "cli", targets: [] },
      );
    }
    for (let i = 0; i < 5; i++) {
      const claim = await t.journal.claim(CLAIM);
      if (!claim) throw new Error("no claim");
      await t.journal.complete(claim.lease);
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
      const all = await t.journal.select(selection);
      for (const limit of [1, 4, 100]) {
        const paged = [];
        for (let afterSeq = 0; ; ) {
          const page = await t.journal.selectPage(selection, { afterSeq, limit });
          expect(page.length).toBeLessThanOrEqual(limit);
          paged.push(...page);
          if (page.length < limit) break;
          afterSeq = page[page.length - 1]?.seq ?? afterSeq;
        }
        expect(paged).toEqual(all);
      }
    }
    expect((await t.journal.select({ agent: "reviewer" })).map((o) => o.jobId)).toEqual([
      "j0",
      "j3",
      "j6",
      "j9",
      "j12",
      "j15",
      "j18",
      "j21",
    ]);
    expect(await t.journal.selectPage({ all: true }, { afterSeq: 0, limit: 0 })).toEqual([]);
  });
});
