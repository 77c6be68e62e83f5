// What the store hands back is distrusted row by row (issue 42, docs/runbook.md "A damaged
// output"): a damaged output row ends its own run dead (class integrity) at the claim, and never
// reaches a claim, a select, a page or another output's run; list marks it, damaged() finds it.
import type { AgentOutput } from "@idem/schema";
import { isIdemError } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAMAGES, damageOutputRow } from "../../../../test/support/damage-output.js";
import { type FullStore, full } from "./full-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const out = (jobId: string, path = `${jobId}.txt`): AgentOutput => ({
  jobId,
  agent: "writer",
  effects: [{ kind: "file.write", root: "out", path, content: jobId }],
});
const CLAIM = { owner: "test", leaseMs: 600_000, maxLeaseExpiries: 3 };
const at = (s: FullStore) =>
  s.location.startsWith("postgres") ? { url: s.location } : { path: s.location };

describe.each(STORES.map((make) => [make().name, make] as const))(
  "damaged output rows on %s",
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

    it("end their own runs dead with class integrity at the claim, and every sound run is claimed in order", async () => {
      const j = await store();
      const body = (id: string) => JSON.stringify(out(id));
      for (const id of ["a", "cut", "b", "nul", "c", "nulleffect", "hash", "d"])
        await j.outputs.record(out(id), { source: "cli", targets: ["root:out"] });
      await damageOutputRow(at(j), "cut", DAMAGES.cut(body("cut")), "kept");
      await damageOutputRow(at(j), "nul", DAMAGES.null());
      await damageOutputRow(at(j), "nulleffect", DAMAGES.nullEffect(body("nulleffect")));
      // One changed character inside a text value: still JSON, still the shape, not what was recorded.
      await damageOutputRow(
        at(j),
        "hash",
        body("hash").replace('"content":"hash"', '"content":"hasH"'),
        "kept",
      );

      const claimed: string[] = [];
      for (;;) {
        const c = await j.runs.claim(CLAIM);
        if (!c) break;
        claimed.push(c.run.jobId);
        expect(c.output.output).toEqual(out(c.run.jobId));
        await j.runs.complete(c.lease);
      }
      expect(claimed).toEqual(["a", "b", "c", "d"]);
      for (const id of ["cut", "nul", "nulleffect", "hash"]) {
        const run = await j.runs.latest(id);
        expect(run?.state, id).toBe("dead");
        expect(run?.class, id).toBe("integrity");
        expect(run?.lastError, id).toContain(`job ${id}`);
        expect(run?.lastError, id).toContain('docs/runbook.md, "A damaged output"');
      }
    });

    it("are left out of select and page (a page reads on past them), marked in list, refused by get and found by damaged()", async () => {
      const j = await store();
      const ids = Array.from({ length: 9 }, (_, i) => `o${i}`);
      for (const id of ids) await j.outputs.record(out(id), { source: "cli", targets: [] });
      // Three in a row: a page of 2 must read on past them.
      for (const id of ["o2", "o3", "o4"]) await damageOutputRow(at(j), id, DAMAGES.null());
      await damageOutputRow(at(j), "o7", '{"jobId":"o7","agent":"writer","effe', "kept");
      const sound = ids.filter((id) => !["o2", "o3", "o4", "o7"].includes(id));

      expect((await j.outputs.select({ all: true })).map((o) => o.jobId)).toEqual(sound);
      expect((await j.outputs.select({ jobIds: ["o3", "o5"] })).map((o) => o.jobId)).toEqual([
        "o5",
      ]);
      for (const limit of [1, 2, 3, 100]) {
        const paged: string[] = [];
        for (let afterSeq = 0; ; ) {
          const page = await j.outputs.page({ all: true }, { afterSeq, limit });
          paged.push(...page.map((o) => o.jobId));
          if (page.length < limit) break;
          afterSeq = page.at(-1)?.seq ?? afterSeq;
        }
        expect(paged, `limit ${limit}`).toEqual(sound);
      }

      const listed = await j.outputs.list();
      expect(listed.map((o) => o.jobId)).toEqual(ids);
      expect(listed.filter((o) => o.damaged !== undefined).map((o) => o.jobId)).toEqual([
        "o2",
        "o3",
        "o4",
        "o7",
      ]);
      expect(listed.find((o) => o.jobId === "o7")?.damaged).toMatch(/content hash/);
      expect(listed.find((o) => o.jobId === "o2")?.damaged).toMatch(/not an agent output/);

      const refused = await j.outputs.get("o3").catch((e: unknown) => e);
      expect(isIdemError(refused, "INTEGRITY")).toBe(true);
      expect((refused as Error).message).toContain('docs/runbook.md, "A damaged output"');
      expect((await j.outputs.get("o5"))?.output).toEqual(out("o5"));

      const damaged = await j.outputs.damaged();
      expect(damaged.map((d) => d.jobId)).toEqual(["o2", "o3", "o4", "o7"]);
      // The problem names what is wrong, never the body.
      for (const d of damaged) expect(d.problem).not.toContain("writer");
    });

    it("keep a replay from making a run for them", async () => {
      const j = await store();
      await j.outputs.record(out("r1"), { source: "cli", targets: [] });
      await j.outputs.record(out("r2"), { source: "cli", targets: [] });
      for (;;) {
        const c = await j.runs.claim(CLAIM);
        if (!c) break;
        await j.runs.complete(c.lease);
      }
      await damageOutputRow(at(j), "r1", DAMAGES.null());
      const created = await j.runs.replay({ all: true }, { actor: "t" });
      expect(created.map((r) => r.jobId)).toEqual(["r2"]);
    });
  },
);
