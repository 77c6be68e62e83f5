import type { AgentOutput } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReplaySelection } from "../../src/index.js";
import { type FullStore, full } from "./full-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const out = (jobId: string, agent = "writer"): AgentOutput => ({
  jobId,
  agent,
  summary: `wrote ${jobId}`,
  effects: [
    { kind: "file.write", root: "out", path: `${jobId}.txt`, content: jobId },
    { kind: "file.write", root: "out", path: `${jobId}.md`, content: jobId },
  ],
});
const CLAIM = { owner: "test", leaseMs: 600_000, maxLeaseExpiries: 3 };

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's outputs list, select and page on %s",
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

    it("lists outputs with their latest run, filtered by state, agent, time and limit", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: [] });
      await j.outputs.record(out("b", "reviewer"), { source: "cli", targets: [] });
      const c = await j.runs.claim(CLAIM);
      if (c) await j.runs.complete(c.lease);
      const all = await j.outputs.list();
      expect(all.map((o) => [o.jobId, o.agent, o.effects, o.generation, o.state])).toEqual([
        ["a", "writer", 2, 1, "done"],
        ["b", "reviewer", 2, 1, "pending"],
      ]);
      expect(all[0]?.seq).toBeLessThan(all[1]?.seq ?? 0);
      expect((await j.outputs.list({ agent: "reviewer" })).map((o) => o.jobId)).toEqual(["b"]);
      expect((await j.outputs.list({ state: "done" })).map((o) => o.jobId)).toEqual(["a"]);
      expect((await j.outputs.list({ limit: 1 })).map((o) => o.jobId)).toEqual(["a"]);
      const b = all[1]?.recordedAt ?? 0;
      expect((await j.outputs.list({ since: b + 1 })).map((o) => o.jobId)).toEqual([]);
      await j.runs.replay({ jobIds: ["a"] }, { actor: "t" });
      expect(
        (await j.outputs.list({ state: "pending" })).map((o) => [o.jobId, o.generation]),
      ).toEqual([
        ["a", 2],
        ["b", 1],
      ]);
    });

    it("reads page after page exactly what select reads, for every kind of selection", async () => {
      const j = await store();
      for (let i = 0; i < 23; i++) {
        await j.outputs.record(out(`j${i}`, i % 3 === 0 ? "reviewer" : "writer"), {
          source: "cli",
          targets: [],
        });
      }
      for (let i = 0; i < 5; i++) {
        const claim = await j.runs.claim(CLAIM);
        if (!claim) throw new Error("no claim");
        await j.runs.complete(claim.lease);
      }
      const since = (await j.outputs.get("j20"))?.recordedAt ?? 0;
      const selections: ReplaySelection[] = [
        { all: true },
        { agent: "reviewer" },
        { since },
        { state: "done" },
        { state: "pending", agent: "writer" },
        { jobIds: ["j20", "j3", "j7", "j11", "missing", "j3"] },
        { jobIds: [] },
        {},
      ];
      for (const selection of selections) {
        const all = await j.outputs.select(selection);
        for (const limit of [1, 4, 100]) {
          const paged = [];
          for (let afterSeq = 0; ; ) {
            const page = await j.outputs.page(selection, { afterSeq, limit });
            expect(page.length).toBeLessThanOrEqual(limit);
            paged.push(...page);
            if (page.length < limit) break;
            afterSeq = page[page.length - 1]?.seq ?? afterSeq;
          }
          expect(paged).toEqual(all);
        }
      }
      const ids = (s: ReplaySelection) => j.outputs.select(s).then((r) => r.map((o) => o.jobId));
      expect(await ids({ agent: "reviewer" })).toEqual([
        "j0",
        "j3",
        "j6",
        "j9",
        "j12",
        "j15",
        "j18",
        "j21",
      ]);
      expect(await ids({ jobIds: ["j20", "j3", "missing", "j3"] })).toEqual(["j3", "j20"]);
      expect(await ids({ state: "done" })).toEqual(["j0", "j1", "j2", "j3", "j4"]);
      expect(await ids({})).toEqual([]);
      expect((await j.outputs.select({ jobIds: ["j1"] }))[0]?.output).toEqual(out("j1"));
      expect(await j.outputs.page({ all: true }, { afterSeq: 0, limit: 0 })).toEqual([]);
    });
  },
);
