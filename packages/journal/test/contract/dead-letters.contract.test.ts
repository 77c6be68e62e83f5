import { isIdemError, type Job } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_EVENTS as E } from "../../src/index.js";
import { type QueueStore, queue } from "./queue-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const job = (jobId: string): Job => ({ jobId, agent: "writer", input: { n: 1 } });
const code = async (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) => (isIdemError(e) ? e.code : String(e)),
  );

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's dead letters on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: QueueStore[] = [];
    const store = async () => {
      const s = queue(await factory.open());
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

    /** Delivers the job once and fails it, due again at once. */
    const deliverAndFail = async (j: QueueStore, error: string) => {
      const c = await j.jobs.claimNext({ owner: "e", leaseMs: 600_000, maxDeliver: 2 });
      expect(c).toBeDefined();
      await j.jobs.fail(c?.lease as NonNullable<typeof c>["lease"], {
        class: "logic",
        error,
        nextAt: Date.now(),
      });
    };

    it("dead-letters a job delivered maxDeliver times instead of delivering it again, with its class and event", async () => {
      const j = await store();
      await j.jobs.enqueue(job("m-1"));
      await deliverAndFail(j, "first");
      await deliverAndFail(j, "second");
      const told: string[][] = [];
      const third = await j.jobs.claimNext({
        owner: "e",
        leaseMs: 600_000,
        maxDeliver: 2,
        onDeadLettered: (ids) => told.push(ids),
      });
      expect(third).toBeUndefined();
      expect(told).toEqual([["m-1"]]);
      const [dl] = await j.deadLetters.list();
      expect([dl?.jobId, dl?.class, dl?.deliveries, dl?.lastError, dl?.agent]).toEqual([
        "m-1",
        "logic",
        2,
        "second",
        "writer",
      ]);
      expect((await j.jobs.get("m-1"))?.state).toBe("dead");
      expect((await j.events.list({ jobId: "m-1", type: E.JOB_DEAD })).map((e) => e.data)).toEqual([
        { class: "logic", error: "second", deliveries: 2 },
      ]);
      expect((await j.jobs.claim(job("m-1"), { owner: "x", leaseMs: 1 })).status).toBe("dead");
    });

    it("retries a dead letter: resolved, the job queued with its deliveries reset; a second resolve is NOT_FOUND", async () => {
      const j = await store();
      await j.jobs.enqueue(job("r-1"));
      await j.deadLetters.add("r-1", { class: "transient", error: "gave up", deliveries: 3 });
      expect(
        await j.deadLetters.resolve("r-1", { action: "retry", actor: "ops", reason: "fixed" }),
      ).toEqual({ retries: 1 });
      const queued = await j.jobs.get("r-1");
      expect([queued?.state, queued?.deliveries]).toEqual(["queued", 0]);
      expect(await j.deadLetters.list({ unresolved: true })).toEqual([]);
      const [resolved] = await j.deadLetters.list();
      expect(JSON.parse(resolved?.resolution ?? "null")).toEqual({
        action: "retry",
        actor: "ops",
        reason: "fixed",
      });
      expect(await code(j.deadLetters.resolve("r-1", { action: "dismiss", actor: "ops" }))).toBe(
        "NOT_FOUND",
      );
      const again = await j.jobs.claimNext({ owner: "e", leaseMs: 600_000 });
      expect([again?.job.jobId, again?.lease.deliveries]).toEqual(["r-1", 1]);
      const types = (await j.events.list({ jobId: "r-1" })).map((e) => e.type);
      expect(types).toEqual([E.JOB_DEAD, E.JOB_RETRY]);
    });

    it("keeps one open dead letter per job, none for a job whose output is recorded, and dismisses one", async () => {
      const j = await store();
      await j.jobs.enqueue(job("o-1"));
      const failure = { class: "logic" as const, error: "bad", deliveries: 1 };
      await j.deadLetters.add("o-1", failure);
      await j.deadLetters.add("o-1", failure);
      await j.deadLetters.add("adv-1", { ...failure, agent: "reader" }); // an advisory: no job row
      await j.outputs.record(
        { jobId: "o-2", agent: "writer", summary: "ok", effects: [] },
        { source: "cli", targets: [] },
      );
      await j.deadLetters.add("o-2", failure);
      const open = await j.deadLetters.list({ unresolved: true });
      expect(open.map((d) => [d.jobId, d.agent])).toEqual([
        ["o-1", "writer"],
        ["adv-1", "reader"],
      ]);
      expect(await j.events.count([E.JOB_DEAD])).toEqual({ [E.JOB_DEAD]: 2 });
      expect(await j.deadLetters.resolve("o-1", { action: "dismiss", actor: "ops" })).toEqual({
        retries: 0,
      });
      expect((await j.jobs.get("o-1"))?.state).toBe("dead");
      expect(await j.deadLetters.list({ since: Date.now() + 3_600_000 })).toEqual([]);
      expect((await j.status()).deadLetters).toBe(1);
    });

    it("dead-letters a job under its current lease, and refuses a stale one", async () => {
      const j = await store();
      await j.jobs.enqueue(job("l-1"));
      const c = await j.jobs.claimNext({ owner: "e", leaseMs: 600_000 });
      const lease = c?.lease as NonNullable<typeof c>["lease"];
      const stale = { ...lease, token: "not-the-token" };
      const failure = { class: "logic" as const, error: "bad", deliveries: 1 };
      expect(await code(j.deadLetters.add("l-1", failure, stale))).toBe("LEASE_LOST");
      expect(await j.deadLetters.list()).toEqual([]);
      await j.deadLetters.add("l-1", failure, lease);
      expect((await j.jobs.get("l-1"))?.state).toBe("dead");
      expect((await j.events.list({ type: E.JOB_DEAD }))[0]?.actor).toBe("e");
    });
  },
);
