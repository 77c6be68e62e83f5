// The W3C trace context kept with a record and with a job (migration 0006): stored on the first
// write only, returned read-only, and never part of what tells a duplicate from a conflict.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalStore } from "../../src/index.js";
import { CLAIM, output } from "../helpers.js";
import { STORES, type StoreFactory } from "./stores.js";

const FIRST = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const SECOND = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const RECORD = { source: "http", targets: ["repo:site@main"] } as const;

/** Each test on a fresh journal of each store. */
describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: JournalStore[] = [];
    const store = async () => {
      const s = (await factory.open()) as unknown as JournalStore;
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

    describe("trace context of outputs", () => {
      it("keeps the first traceparent: a retried submit under another one is a duplicate and changes nothing", async () => {
        const j = await store();
        const first = await j.outputs.record(output("j1"), { ...RECORD, traceparent: FIRST });
        const retried = await j.outputs.record(output("j1"), {
          ...RECORD,
          traceparent: SECOND,
        });
        expect(first.status).toBe("recorded");
        expect(retried.status).toBe("duplicate");
        expect(retried.contentHash).toBe(first.contentHash);
        expect((await j.outputs.get("j1"))?.traceparent).toBe(FIRST);
      });

      it("is no part of the content: other content under the same traceparent is still a conflict", async () => {
        const j = await store();
        await j.outputs.record(output("j1", "one"), { ...RECORD, traceparent: FIRST });
        const other = await j.outputs.record(output("j1", "two"), {
          ...RECORD,
          traceparent: FIRST,
        });
        expect(other.status).toBe("conflict");
        expect((await j.outputs.get("j1"))?.output.summary).toBe("one");
      });

      it("a record without one has no traceparent field, and a later retry with one does not add it", async () => {
        const j = await store();
        await j.outputs.record(output("j1"), RECORD);
        await j.outputs.record(output("j1"), { ...RECORD, traceparent: SECOND });
        const rec = await j.outputs.get("j1");
        expect(rec).toBeDefined();
        expect(Object.keys(rec ?? {})).not.toContain("traceparent");
      });

      it("comes back with the output from select, page and a run's claim", async () => {
        const j = await store();
        await j.outputs.record(output("j1"), { ...RECORD, traceparent: FIRST });
        await j.outputs.record(output("j2"), RECORD);
        const selected = await j.outputs.select({ all: true });
        expect(selected.map((o) => o.traceparent)).toEqual([FIRST, undefined]);
        const page = await j.outputs.page({ all: true }, { afterSeq: 0, limit: 1 });
        expect(page[0]?.traceparent).toBe(FIRST);
        const claim = await j.runs.claim(CLAIM);
        expect(claim?.output.jobId).toBe("j1");
        expect(claim?.output.traceparent).toBe(FIRST);
      });
    });

    describe("trace context of jobs", () => {
      const job = { jobId: "job-1", agent: "writer", input: { topic: "x" } };

      it("keeps the traceparent a job was enqueued under; the same job under another one is a duplicate", async () => {
        const j = await store();
        expect((await j.jobs.enqueue(job, { traceparent: FIRST })).status).toBe("enqueued");
        expect((await j.jobs.enqueue(job, { traceparent: SECOND })).status).toBe("duplicate");
        expect((await j.jobs.get("job-1"))?.traceparent).toBe(FIRST);
        expect((await j.jobs.pending()).map((j) => j.traceparent)).toEqual([FIRST]);
      });

      it("hands it to the embedded queue's delivery with the claimed job", async () => {
        const j = await store();
        await j.jobs.enqueue(job, { traceparent: FIRST });
        await j.jobs.enqueue({ ...job, jobId: "job-2" });
        const claimed = await j.jobs.claimNext({ owner: "x", leaseMs: 1000 });
        expect(claimed?.job.traceparent).toBe(FIRST);
        const next = await j.jobs.claimNext({ owner: "x", leaseMs: 1000 });
        expect(next?.job.jobId).toBe("job-2");
        expect(Object.keys(next?.job ?? {})).not.toContain("traceparent");
      });

      it("keeps the delivery's traceparent with a job row the claim creates (a job published by another client)", async () => {
        const j = await store();
        const c = await j.jobs.claim(job, { owner: "x", leaseMs: 1000, traceparent: SECOND });
        expect(c.status).toBe("acquired");
        expect(c.status === "acquired" && c.job.traceparent).toBe(SECOND);
        expect((await j.jobs.get("job-1"))?.traceparent).toBe(SECOND);
      });
    });
  },
);
