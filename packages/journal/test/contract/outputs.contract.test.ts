import type { AgentOutput } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DROPPED_BODY,
  JOURNAL_EVENTS as E,
  type JournalStore,
  REJECTED_BODIES_PER_JOB,
} from "../../src/index.js";
import { type ContractStore, STORES, type StoreFactory } from "./stores.js";

const out = (jobId: string, content = "hello"): AgentOutput => ({
  jobId,
  agent: "writer",
  summary: `wrote ${content}`,
  effects: [{ kind: "file.write", root: "out", path: `${jobId}.txt`, content }],
});
const TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's outputs and events on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: ContractStore[] = [];
    const store = async () => {
      const s = await factory.open();
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

    it("records a new output once and reads it back as written", async () => {
      const j = await store();
      const r = await j.outputs.record(out("a-1"), { source: "cli", targets: ["file:out"] });
      expect(r.status).toBe("recorded");
      expect(await j.outputs.has("a-1")).toBe(true);
      expect(await j.outputs.has("a-2")).toBe(false);
      const got = await j.outputs.get("a-1");
      expect(got?.output).toEqual(out("a-1"));
      expect(got?.source).toBe("cli");
      expect(got?.contentHash).toBe(r.contentHash);
      expect(got?.traceparent).toBeUndefined();
      expect(await j.outputs.get("a-2")).toBeUndefined();
    });

    it("answers the same output again as a duplicate with the first seq, writing only an event", async () => {
      const j = await store();
      const first = await j.outputs.record(out("d-1"), { source: "http", targets: [] });
      const again = await j.outputs.record(out("d-1"), { source: "nats", targets: [] });
      expect(again).toEqual({ ...first, status: "duplicate" });
      expect(await j.outputs.rejections("d-1")).toEqual([]);
      const types = (await j.events.list({ jobId: "d-1" })).map((e) => e.type);
      expect(types).toEqual([E.OUTPUT_RECORDED, E.OUTPUT_DUPLICATE]);
    });

    it("refuses another output for a recorded job as a conflict, keeping it in rejections and the first as it was", async () => {
      const j = await store();
      const first = await j.outputs.record(out("c-1"), { source: "cli", targets: [] });
      const second = await j.outputs.record(out("c-1", "other"), { source: "http", targets: [] });
      expect(second.status).toBe("conflict");
      if (second.status !== "conflict") return;
      expect(second.existingHash).toBe(first.contentHash);
      expect((await j.outputs.get("c-1"))?.output).toEqual(out("c-1"));
      const rejections = await j.outputs.rejections("c-1");
      expect(rejections.map((r) => [r.contentHash, r.source])).toEqual([
        [second.contentHash, "http"],
      ]);
      expect(await j.events.count([E.OUTPUT_CONFLICT, E.OUTPUT_DUPLICATE])).toEqual({
        [E.OUTPUT_CONFLICT]: 1,
        [E.OUTPUT_DUPLICATE]: 0,
      });
    });

    it("keeps the first traceparent only, and a retry under another one is still a duplicate", async () => {
      const j = await store();
      await j.outputs.record(out("t-1"), { source: "http", targets: [], traceparent: TP });
      const again = await j.outputs.record(out("t-1"), {
        source: "http",
        targets: [],
        traceparent: TP.replace("b7ad", "c8be"),
      });
      expect(again.status).toBe("duplicate");
      expect((await j.outputs.get("t-1"))?.traceparent).toBe(TP);
    });

    it("records one output when many submissions of one job race, the rest duplicates or conflicts", async () => {
      const j = await store();
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          j.outputs.record(out("race-1", i % 2 === 0 ? "even" : "odd"), {
            source: "http",
            targets: ["file:out"],
          }),
        ),
      );
      const recorded = results.filter((r) => r.status === "recorded");
      expect(recorded).toHaveLength(1);
      const winner = (await j.outputs.get("race-1"))?.contentHash;
      for (const r of results) {
        if (r.status === "duplicate") expect(r.contentHash).toBe(winner);
        if (r.status === "conflict") expect(r.existingHash).toBe(winner);
      }
      // The losing content is kept once, however many times it conflicted.
      const conflicts = results.filter((r) => r.status === "conflict");
      expect(conflicts.length).toBeGreaterThan(0);
      expect(await j.outputs.rejections("race-1")).toHaveLength(1);
      expect((await j.events.count([E.OUTPUT_CONFLICT]))[E.OUTPUT_CONFLICT]).toBe(conflicts.length);
    });

    it("keeps an identical conflicting resubmission once, and each distinct content once", async () => {
      const j = await store();
      await j.outputs.record(out("dup-c"), { source: "cli", targets: [] });
      const big = { ...out("dup-c", "other"), summary: "x".repeat(100_000) };
      // Twenty identical conflicts, some at once and some one after another.
      const together = await Promise.all(
        Array.from({ length: 10 }, () => j.outputs.record(big, { source: "http", targets: [] })),
      );
      for (let i = 0; i < 10; i++) await j.outputs.record(big, { source: "http", targets: [] });
      expect(together.every((r) => r.status === "conflict")).toBe(true);
      const third = await j.outputs.record(out("dup-c", "third"), { source: "cli", targets: [] });
      expect(third.status).toBe("conflict");
      const kept = await j.outputs.rejections("dup-c");
      expect(kept.map((r) => r.contentHash)).toEqual([together[0]?.contentHash, third.contentHash]);
      // Every refused attempt is still counted (the audit's conflicts refused).
      expect((await j.events.count([E.OUTPUT_CONFLICT]))[E.OUTPUT_CONFLICT]).toBe(21);
    });

    it("keeps at most REJECTED_BODIES_PER_JOB conflicting bodies per job, the rest as rows without a body, counted in status", async () => {
      const j = await store();
      await j.outputs.record(out("cap-1"), { source: "cli", targets: [] });
      const n = REJECTED_BODIES_PER_JOB + 5;
      const other = (i: number) => ({ ...out("cap-1", `other ${i}`), summary: "y".repeat(10_000) });
      // At once, so that the cap holds under concurrent conflicts too.
      const answers = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          j.outputs.record(other(i), { source: "http", targets: [] }),
        ),
      );
      expect(answers.every((a) => a.status === "conflict")).toBe(true);
      // A dropped content sent again is known: no second row.
      const dropped = (await j.outputs.rejections("cap-1")).find((r) => r.body === DROPPED_BODY);
      const again = answers.find((a) => a.contentHash === dropped?.contentHash);
      const index = answers.indexOf(again as (typeof answers)[number]);
      await j.outputs.record(other(index), { source: "http", targets: [] });
      const rows = await j.outputs.rejections("cap-1");
      expect(rows).toHaveLength(n);
      expect(new Set(rows.map((r) => r.contentHash)).size).toBe(n);
      expect(rows.filter((r) => r.body !== DROPPED_BODY)).toHaveLength(REJECTED_BODIES_PER_JOB);
      for (const r of rows.filter((x) => x.body !== DROPPED_BODY))
        expect(r.body.length).toBeGreaterThan(10_000);
      const status = await (j as unknown as JournalStore).status();
      expect(status.rejections).toBe(n);
      expect(status.rejectedBodies).toEqual({ perJob: REJECTED_BODIES_PER_JOB, dropped: 5 });
      const events = await j.events.list({ jobId: "cap-1", type: E.OUTPUT_CONFLICT });
      expect(events).toHaveLength(n + 1);
      expect(events.filter((e) => e.data?.bodyDropped === true)).toHaveLength(5);
    });

    it("lists events in the order written, filtered by job, type and time, and counts them by type", async () => {
      const j = await store();
      await j.events.append({ jobId: "e-1", type: "x.one", actor: "t", data: { n: 1 } });
      await j.events.append({ jobId: "e-2", type: "x.two", actor: "t" });
      await j.events.append({ jobId: "e-1", type: "x.two", actor: "u" });
      const all = await j.events.list();
      expect(all.map((e) => [e.jobId, e.type])).toEqual([
        ["e-1", "x.one"],
        ["e-2", "x.two"],
        ["e-1", "x.two"],
      ]);
      expect(all[0]?.data).toEqual({ n: 1 });
      expect(all[1]?.data).toBeNull();
      expect((await j.events.list({ jobId: "e-1", type: "x.two" })).map((e) => e.actor)).toEqual([
        "u",
      ]);
      expect(await j.events.list({ limit: 1 })).toHaveLength(1);
      expect(await j.events.list({ since: Date.now() + 3_600_000 })).toEqual([]);
      expect(await j.events.count(["x.one", "x.two", "x.none"])).toEqual({
        "x.one": 1,
        "x.two": 2,
        "x.none": 0,
      });
    });
  },
);
