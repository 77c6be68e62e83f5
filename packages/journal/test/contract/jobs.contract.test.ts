import { isIdemError, type Job } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_EVENTS as E } from "../../src/index.js";
import { another, type QueueStore, queue, until } from "./queue-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const job = (jobId: string, input: Job["input"] = { n: 1 }, agent = "writer"): Job => ({
  jobId,
  agent,
  input,
});
const TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const code = async (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) => (isIdemError(e) ? e.code : String(e)),
  );

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's job queue on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: QueueStore[] = [];
    const store = async () => {
      const s = queue(await factory.open());
      open.push(s);
      return s;
    };
    const alsoOn = async (s: QueueStore) => {
      const other = await another(factory, s);
      open.push(other);
      return other;
    };
    beforeAll(() => {
      factory = make();
    });
    afterAll(async () => {
      for (const s of open) await s.close();
      await factory.teardown();
    });

    it("enqueues a job once: the same job again is a duplicate, another input a conflict with its event", async () => {
      const j = await store();
      const first = await j.jobs.enqueue(job("q-1"), { traceparent: TP });
      expect(first.status).toBe("enqueued");
      const again = await j.jobs.enqueue(job("q-1"), { traceparent: TP.replace("b7ad", "c8be") });
      expect(again).toEqual({ ...first, status: "duplicate" });
      expect(await j.jobs.enqueue(job("q-1", { n: 2 }), { actor: "cli" })).toEqual({
        status: "conflict",
        jobId: "q-1",
      });
      const got = await j.jobs.get("q-1");
      expect(got?.input).toEqual({ n: 1 });
      expect(got?.state).toBe("queued");
      expect(got?.traceparent).toBe(TP);
      expect((await j.events.list({ jobId: "q-1" })).map((e) => [e.type, e.actor])).toEqual([
        [E.JOB_CONFLICT, "cli"],
      ]);
      expect(await j.jobs.get("q-none")).toBeUndefined();
      expect(await j.jobs.count()).toBe(1);
    });

    it("writes the embedded queue's event with the row when asked: enqueued or duplicate, with its seq", async () => {
      const j = await store();
      const first = await j.jobs.enqueue(job("qe-1"), { queueEvent: true, actor: "cli" });
      const again = await j.jobs.enqueue(job("qe-1"), { queueEvent: true });
      expect(again).toEqual({ ...first, status: "duplicate" });
      const seq = first.status === "enqueued" ? first.seq : -1;
      expect(
        (await j.events.list({ jobId: "qe-1" })).map((e) => [e.type, e.data, e.actor]),
      ).toEqual([
        [E.JOB_ENQUEUED, { stream: "embedded", seq }, "cli"],
        [E.JOB_DUPLICATE, { stream: "embedded", seq }, "enqueue"],
      ]);
      // Not asked (an outbox row before its publish): no event of its own.
      await j.jobs.enqueue(job("qe-2"));
      expect(await j.events.list({ jobId: "qe-2" })).toEqual([]);
    });

    it("enqueues one job when stores on one journal race to enqueue it, the rest duplicates or conflicts", async () => {
      const j = await store();
      const stores = [j, await alsoOn(j), await alsoOn(j)];
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (stores[i % 3] as QueueStore).jobs.enqueue(job("race-1", { n: i % 2 })),
        ),
      );
      expect(results.filter((r) => r.status === "enqueued")).toHaveLength(1);
      const winner = (await j.jobs.get("race-1"))?.input as { n: number };
      for (const [i, r] of results.entries()) {
        if (r.status !== "enqueued")
          expect(r.status).toBe(i % 2 === winner.n ? "duplicate" : "conflict");
      }
    });

    it("never delivers one job to two holders when several stores on one journal claim at once", async () => {
      const j = await store();
      for (let i = 0; i < 24; i++) await j.jobs.enqueue(job(`many-${i}`));
      const stores = [j, await alsoOn(j), await alsoOn(j), await alsoOn(j)];
      const taken = await Promise.all(
        stores.map(async (s, k) => {
          const mine: string[] = [];
          for (;;) {
            const claimed = await s.jobs.claimNext({ owner: `host-${k}`, leaseMs: 600_000 });
            if (!claimed) return mine;
            expect(claimed.lease.owner).toBe(`host-${k}`);
            mine.push(claimed.job.jobId);
          }
        }),
      );
      const all = taken.flat();
      expect(all).toHaveLength(24);
      expect(new Set(all).size).toBe(24);
      expect((await j.status()).jobs.running).toBe(24);
    });

    it("lets another holder take an expired lease over; the old holder's extend, fail and dead letter change nothing", async () => {
      const j = await store();
      const other = await alsoOn(j);
      await j.jobs.enqueue(job("exp-1"));
      const old = await j.jobs.claimNext({ owner: "old", leaseMs: 1 });
      expect(old?.lease.deliveries).toBe(1);
      const taken = await until(
        () => other.jobs.claimNext({ owner: "new", leaseMs: 600_000 }),
        "the takeover of an expired lease",
      );
      expect(taken.job.jobId).toBe("exp-1");
      expect(taken.lease.deliveries).toBe(2);
      const lease = old?.lease as NonNullable<typeof old>["lease"];
      expect(await code(j.jobs.extendLease(lease, 60_000))).toBe("LEASE_LOST");
      expect(
        await code(j.jobs.fail(lease, { class: "transient", error: "late", nextAt: Date.now() })),
      ).toBe("LEASE_LOST");
      expect(
        await code(
          j.deadLetters.add("exp-1", { class: "logic", error: "late", deliveries: 1 }, lease),
        ),
      ).toBe("LEASE_LOST");
      const now = await j.jobs.get("exp-1");
      expect([now?.state, now?.leaseOwner, now?.lastError]).toEqual(["running", "new", null]);
      expect(await j.deadLetters.list()).toEqual([]);
      expect(await j.events.list({ jobId: "exp-1" })).toEqual([]);
      const extended = await other.jobs.extendLease(taken.lease, 600_000);
      expect(extended.token).toBe(taken.lease.token);
    });

    it("backs a failed delivery off: queued again, not due before its next time, with its event", async () => {
      const j = await store();
      await j.jobs.enqueue(job("back-1"));
      const claimed = await j.jobs.claimNext({ owner: "e", leaseMs: 600_000 });
      await j.jobs.fail(claimed?.lease as NonNullable<typeof claimed>["lease"], {
        class: "transient",
        error: "boom",
        nextAt: Date.now() + 3_600_000,
      });
      const failed = await j.jobs.get("back-1");
      expect([failed?.state, failed?.lastError, failed?.lastClass]).toEqual([
        "queued",
        "boom",
        "transient",
      ]);
      expect(failed?.nextAt).toBeGreaterThan(Date.now() + 3_000_000);
      expect(await j.jobs.claimNext({ owner: "e", leaseMs: 600_000 })).toBeUndefined();
      const [event] = await j.events.list({ jobId: "back-1" });
      expect([event?.type, event?.actor, event?.data?.class]).toEqual([
        E.JOB_FAILED,
        "e",
        "transient",
      ]);
    });

    it("claims only the agents asked for", async () => {
      const j = await store();
      await j.jobs.enqueue(job("ag-1", {}, "reader"));
      await j.jobs.enqueue(job("ag-2", {}, "writer"));
      const c = await j.jobs.claimNext({ owner: "e", leaseMs: 600_000, agents: ["writer"] });
      expect(c?.job.jobId).toBe("ag-2");
      expect(
        await j.jobs.claimNext({ owner: "e", leaseMs: 600_000, agents: ["writer"] }),
      ).toBeUndefined();
    });

    it("claims a delivered job: creates its row, holds it for one delivery, answers recorded once its output is", async () => {
      const j = await store();
      const other = await alsoOn(j);
      const first = await j.jobs.claim(job("d-1"), {
        owner: "a",
        leaseMs: 600_000,
        streamSeq: 7,
        traceparent: TP,
      });
      expect(first.status).toBe("acquired");
      if (first.status !== "acquired") return;
      expect([first.job.streamSeq, first.job.traceparent, first.lease.deliveries]).toEqual([
        7,
        TP,
        1,
      ]);
      const held = await other.jobs.claim(job("d-1"), { owner: "b", leaseMs: 600_000 });
      expect(held).toEqual({ status: "held", until: first.lease.until });
      expect(
        (await other.jobs.claim(job("d-1", { n: 9 }), { owner: "b", leaseMs: 1 })).status,
      ).toBe("conflict");
      await j.outputs.record(
        { jobId: "d-1", agent: "writer", summary: "ok", effects: [] },
        { source: "nats", targets: [] },
      );
      expect(await other.jobs.claim(job("d-1"), { owner: "b", leaseMs: 1 })).toEqual({
        status: "recorded",
      });
      expect((await j.jobs.get("d-1"))?.state).toBe("done");
    });

    it("lists the outbox's pending jobs (no output, not dead) and counts jobs since a time", async () => {
      const j = await store();
      const t0 = Date.now();
      await j.jobs.enqueue(job("p-1"));
      await j.jobs.enqueue(job("p-2"));
      await j.jobs.enqueue(job("p-3"));
      await j.outputs.record(
        { jobId: "p-2", agent: "writer", summary: "ok", effects: [] },
        { source: "cli", targets: [] },
      );
      await j.jobs.setStreamSeq("p-3", 42, { type: "job.published", actor: "enqueue" });
      const pending = await j.jobs.pending();
      expect(pending.map((p) => [p.jobId, p.streamSeq])).toEqual([
        ["p-1", null],
        ["p-3", 42],
      ]);
      expect(await j.jobs.pending({ limit: 1 })).toHaveLength(1);
      expect(await j.jobs.pending({ since: Date.now() + 3_600_000 })).toEqual([]);
      expect(await j.jobs.count({ since: t0 })).toBe(3);
      expect(await j.jobs.count({ since: Date.now() + 3_600_000 })).toBe(0);
      expect((await j.events.list({ jobId: "p-3" })).map((e) => e.type)).toEqual(["job.published"]);
    });
  },
);
