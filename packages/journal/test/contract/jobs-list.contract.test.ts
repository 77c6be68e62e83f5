import { isIdemError, type Job } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_EVENTS as E } from "../../src/index.js";
import { type QueueStore, queue } from "./queue-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const job = (jobId: string, agent = "writer"): Job => ({ jobId, agent, input: { big: "x" } });

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's job listing on %s",
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

    it("lists the jobs waiting for an output (queued, leased, backing off) with holder and lease end, without inputs", async () => {
      const j = await store();
      for (const id of ["l-1", "l-2", "l-3", "l-4", "l-5"]) await j.jobs.enqueue(job(id));
      await j.jobs.enqueue(job("l-6", "reader"));
      const held = await j.jobs.claimNext({ owner: "host:42:abc", leaseMs: 600_000 });
      expect(held?.job.jobId).toBe("l-1");
      const failed = await j.jobs.claimNext({ owner: "host:43:def", leaseMs: 600_000 });
      const retryAt = Date.now() + 3_600_000;
      await j.jobs.fail(failed?.lease as NonNullable<typeof failed>["lease"], {
        class: "transient",
        error: "boom",
        nextAt: retryAt,
      });
      await j.outputs.record(
        { jobId: "l-3", agent: "writer", effects: [] },
        { source: "api", targets: [] },
      );
      const dying = await j.jobs.claimNext({ owner: "host:44:ghi", leaseMs: 600_000 });
      expect(dying?.job.jobId).toBe("l-4");
      await j.deadLetters.add(
        "l-4",
        { class: "logic", error: "no", deliveries: 1 },
        dying?.lease as NonNullable<typeof dying>["lease"],
      );

      const listed = await j.jobs.list();
      expect(listed.map((e) => [e.jobId, e.state])).toEqual([
        ["l-1", "running"],
        ["l-2", "queued"],
        ["l-5", "queued"],
        ["l-6", "queued"],
      ]);
      const [leased, waiting] = listed;
      expect(leased).toMatchObject({
        agent: "writer",
        leaseOwner: "host:42:abc",
        leaseUntil: held?.lease.until,
        deliveries: 1,
      });
      expect(waiting).toMatchObject({
        leaseOwner: null,
        leaseUntil: null,
        deliveries: 1,
        lastError: "boom",
        lastClass: "transient",
      });
      // PostgreSQL takes the delay from its own clock: the time is the retry's, give or take.
      expect(waiting?.nextAt).toBeGreaterThan(retryAt - 60_000);
      for (const e of listed) expect(e).not.toHaveProperty("input");

      expect((await j.jobs.list({ agent: "reader" })).map((e) => e.jobId)).toEqual(["l-6"]);
      expect((await j.jobs.list({ limit: 2 })).map((e) => e.jobId)).toEqual(["l-1", "l-2"]);
      expect(await j.jobs.list({ agent: "nobody" })).toEqual([]);
      expect((await j.jobs.list({ state: "running" })).map((e) => e.jobId)).toEqual(["l-1"]);
      expect(
        (await j.jobs.list({ state: "queued", agent: "writer", limit: 1 })).map((e) => e.jobId),
      ).toEqual(["l-2"]);
    });

    it("takes a released delivery back: queued and due now, the delivery uncounted, with its event; a stale holder is refused", async () => {
      const j = await store();
      await j.jobs.enqueue(job("r-1"));
      const first = await j.jobs.claimNext({ owner: "e1", leaseMs: 600_000 });
      if (!first) throw new Error("nothing claimed");
      expect(first.lease.deliveries).toBe(1);
      await j.jobs.release(first.lease, { reason: "executor stopping: grace over" });
      const row = await j.jobs.get("r-1");
      expect([row?.state, row?.leaseOwner, row?.deliveries]).toEqual(["queued", null, 0]);
      const events = await j.events.list({ jobId: "r-1", type: E.JOB_RELEASED });
      expect(events.map((e) => [e.actor, e.data?.reason])).toEqual([
        ["e1", "executor stopping: grace over"],
      ]);
      const again = await j.jobs.claimNext({ owner: "e2", leaseMs: 600_000 });
      expect(again?.job.jobId).toBe("r-1");
      expect(again?.lease.deliveries).toBe(1);
      const stale = await j.jobs.release(first.lease, { reason: "late" }).then(
        () => "resolved",
        (e: unknown) => (isIdemError(e) ? e.code : String(e)),
      );
      expect(stale).toBe("LEASE_LOST");
      expect((await j.jobs.get("r-1"))?.leaseOwner).toBe("e2");
    });
  },
);
