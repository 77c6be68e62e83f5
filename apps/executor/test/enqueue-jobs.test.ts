// enqueueJobs on the embedded queue: a batch through the journal's group commit, each job atomic on
// its own. (Its JetStream stop on an unavailable stream is in enqueue.int.test.ts.)

import { enqueueJobs } from "@idem/core";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";

const job = (jobId: string, n: number) => ({ jobId, agent: "writer", input: { n } });

describe("enqueueJobs on the embedded queue", () => {
  it("enqueues in the order given, several in flight; the same job twice is stored once", async () => {
    await using tj = await tempJournal();
    const jobs = Array.from({ length: 40 }, (_, i) => job(`b-${i}`, i));
    jobs.push(job("b-3", 3));
    const settled: number[] = [];
    const r = await enqueueJobs(jobs, {
      journal: tj.journal,
      concurrency: 8,
      onSettled: (i) => settled.push(i),
    });
    expect(r.stoppedBy).toBeUndefined();
    expect(settled.sort((a, b) => a - b)).toEqual(jobs.map((_, i) => i));
    const outcomes = r.outcomes as { jobId: string; seq: number; duplicate: boolean }[];
    expect(outcomes.map((o) => o.jobId)).toEqual(jobs.map((j) => j.jobId));
    // The queue's order is the batch's: the embedded executor claims by seq.
    const seqs = outcomes.slice(0, 40).map((o) => o.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(outcomes.filter((o) => o.duplicate).map((o) => o.jobId)).toEqual(["b-3"]);
    expect(outcomes[40]?.seq).toBe(outcomes[3]?.seq);
    expect((await tj.journal.jobs.pending({ since: 0 })).length).toBe(40);
  });

  it("refuses a conflicting job alone and goes on with the rest", async () => {
    await using tj = await tempJournal();
    await enqueueJobs([job("c-1", 1)], { journal: tj.journal });
    const r = await enqueueJobs([job("c-0", 0), job("c-1", 99), job("c-2", 2)], {
      journal: tj.journal,
    });
    expect(r.outcomes.map((o) => (o && "error" in o ? o.error.code : o?.duplicate))).toEqual([
      false,
      "JOB_CONFLICT",
      false,
    ]);
    expect((await tj.journal.jobs.get("c-1"))?.input).toEqual({ n: 1 });
    expect(await tj.journal.jobs.get("c-2")).toBeDefined();
  });

  it("lets any other error through (a journal that cannot write is not a job's outcome)", async () => {
    await using tj = await tempJournal();
    await tj.journal.close();
    await expect(
      enqueueJobs([job("d-1", 1), job("d-2", 2)], { journal: tj.journal }),
    ).rejects.toThrow(/not open/);
  });
});
