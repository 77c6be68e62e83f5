// The W3C trace context kept with a record and with a job (migration 0006): stored on the first
// write only, returned read-only, and never part of what tells a duplicate from a conflict.
import { describe, expect, it } from "vitest";
import { CLAIM, output, tempJournal } from "./helpers.js";

const FIRST = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const SECOND = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const RECORD = { source: "http", targets: ["repo:site@main"] } as const;

describe("SqliteJournalStore trace context of outputs", () => {
  it("keeps the first traceparent: a retried submit under another one is a duplicate and changes nothing", async () => {
    await using t = await tempJournal();
    const first = await t.journal.outputs.record(output("j1"), { ...RECORD, traceparent: FIRST });
    const retried = await t.journal.outputs.record(output("j1"), {
      ...RECORD,
      traceparent: SECOND,
    });
    expect(first.status).toBe("recorded");
    expect(retried.status).toBe("duplicate");
    expect(retried.contentHash).toBe(first.contentHash);
    expect((await t.journal.outputs.get("j1"))?.traceparent).toBe(FIRST);
  });

  it("is no part of the content: other content under the same traceparent is still a conflict", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("j1", "one"), { ...RECORD, traceparent: FIRST });
    const other = await t.journal.outputs.record(output("j1", "two"), {
      ...RECORD,
      traceparent: FIRST,
    });
    expect(other.status).toBe("conflict");
    expect((await t.journal.outputs.get("j1"))?.output.summary).toBe("one");
  });

  it("a record without one has no traceparent field, and a later retry with one does not add it", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("j1"), RECORD);
    await t.journal.outputs.record(output("j1"), { ...RECORD, traceparent: SECOND });
    const rec = await t.journal.outputs.get("j1");
    expect(rec).toBeDefined();
    expect(Object.keys(rec ?? {})).not.toContain("traceparent");
  });

  it("comes back with the output from select, page and a run's claim", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("j1"), { ...RECORD, traceparent: FIRST });
    await t.journal.outputs.record(output("j2"), RECORD);
    const selected = await t.journal.outputs.select({ all: true });
    expect(selected.map((o) => o.traceparent)).toEqual([FIRST, undefined]);
    const page = await t.journal.outputs.page({ all: true }, { afterSeq: 0, limit: 1 });
    expect(page[0]?.traceparent).toBe(FIRST);
    const claim = await t.journal.runs.claim(CLAIM);
    expect(claim?.output.jobId).toBe("j1");
    expect(claim?.output.traceparent).toBe(FIRST);
  });
});

describe("SqliteJournalStore trace context of jobs", () => {
  const job = { jobId: "job-1", agent: "writer", input: { topic: "x" } };

  it("keeps the traceparent a job was enqueued under; the same job under another one is a duplicate", async () => {
    await using t = await tempJournal();
    expect((await t.journal.jobs.enqueue(job, { traceparent: FIRST })).status).toBe("enqueued");
    expect((await t.journal.jobs.enqueue(job, { traceparent: SECOND })).status).toBe("duplicate");
    expect((await t.journal.jobs.get("job-1"))?.traceparent).toBe(FIRST);
    expect((await t.journal.jobs.pending()).map((j) => j.traceparent)).toEqual([FIRST]);
  });

  it("hands it to the embedded queue's delivery with the claimed job", async () => {
    await using t = await tempJournal();
    await t.journal.jobs.enqueue(job, { traceparent: FIRST });
    await t.journal.jobs.enqueue({ ...job, jobId: "job-2" });
    const claimed = await t.journal.jobs.claimNext({ owner: "x", leaseMs: 1000 });
    expect(claimed?.job.traceparent).toBe(FIRST);
    const next = await t.journal.jobs.claimNext({ owner: "x", leaseMs: 1000 });
    expect(next?.job.jobId).toBe("job-2");
    expect(Object.keys(next?.job ?? {})).not.toContain("traceparent");
  });

  it("keeps the delivery's traceparent with a job row the claim creates (a job published by another client)", async () => {
    await using t = await tempJournal();
    const c = await t.journal.jobs.claim(job, { owner: "x", leaseMs: 1000, traceparent: SECOND });
    expect(c.status).toBe("acquired");
    expect(c.status === "acquired" && c.job.traceparent).toBe(SECOND);
    expect((await t.journal.jobs.get("job-1"))?.traceparent).toBe(SECOND);
  });
});
