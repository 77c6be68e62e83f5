import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalStatus } from "../../src/index.js";
import { type QueueStore, queue } from "./queue-store.js";
import { STORES, type StoreFactory } from "./stores.js";

/** The counts after `operate`, the same on every store. */
const EXPECTED: JournalStatus = {
  outputs: 2,
  rejections: 1,
  rejectedBodies: { perJob: 10, dropped: 0 },
  deadLetters: 1,
  runs: { pending: 2, running: 0, failed: 0, awaiting: 0, done: 0, dead: 0 },
  effects: { intended: 0, applied: 0, present: 0, failed: 0, uncertain: 0, skipped: 0 },
  jobs: { queued: 2, running: 1, done: 1, dead: 1 },
  jobsWaiting: 1,
};

/** One sequence of operations: enqueues, a claim, a record, a conflict, a dead letter. */
async function operate(j: QueueStore): Promise<void> {
  for (const id of ["s-1", "s-2", "s-3", "s-4"])
    await j.jobs.enqueue({ jobId: id, agent: "writer", input: { id } });
  await j.jobs.claim(
    { jobId: "s-1", agent: "writer", input: { id: "s-1" } },
    {
      owner: "e",
      leaseMs: 600_000,
    },
  );
  const output = { jobId: "s-2", agent: "writer", summary: "ok", effects: [] };
  await j.outputs.record(output, { source: "cli", targets: [] });
  await j.outputs.record({ ...output, summary: "other" }, { source: "http", targets: [] });
  await j.outputs.record(
    { jobId: "no-job", agent: "writer", summary: "ok", effects: [] },
    { source: "cli", targets: [] },
  );
  await j.deadLetters.add("s-3", { class: "logic", error: "bad", deliveries: 1 });
  // A failed delivery: queued again, waiting for its retry an hour from now.
  await j.jobs.enqueue({ jobId: "s-5", agent: "writer", input: { id: "s-5" } });
  const claimed = await j.jobs.claim(
    { jobId: "s-5", agent: "writer", input: { id: "s-5" } },
    { owner: "e", leaseMs: 600_000 },
  );
  if (claimed.status !== "acquired") throw new Error(`s-5: ${claimed.status}`);
  await j.jobs.fail(claimed.lease, {
    class: "transient",
    error: "x",
    nextAt: Date.now() + 3_600_000,
  });
}

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's status on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: QueueStore[] = [];
    beforeAll(() => {
      factory = make();
    });
    afterAll(async () => {
      for (const s of open) await s.close();
      await factory.teardown();
    });

    it("counts every state, zero included, on an empty journal", async () => {
      const j = queue(await factory.open());
      open.push(j);
      expect(await j.status()).toEqual({
        ...EXPECTED,
        outputs: 0,
        rejections: 0,
        deadLetters: 0,
        runs: { ...EXPECTED.runs, pending: 0 },
        jobs: { queued: 0, running: 0, done: 0, dead: 0 },
        jobsWaiting: 0,
      });
    });

    it("counts the same outputs, rejections, dead letters, runs and jobs as every store after the same operations", async () => {
      const j = queue(await factory.open());
      open.push(j);
      await operate(j);
      expect(await j.status()).toEqual(EXPECTED);
    });
  },
);

describe("the journal's status on both stores", () => {
  it("is equal on SQLite and PostgreSQL after the same operations", async () => {
    const statuses: JournalStatus[] = [];
    for (const make of STORES) {
      const factory = make();
      const j = queue(await factory.open());
      try {
        await operate(j);
        statuses.push(await j.status());
      } finally {
        await j.close();
        await factory.teardown();
      }
    }
    expect(statuses[1]).toEqual(statuses[0]);
  });
});
