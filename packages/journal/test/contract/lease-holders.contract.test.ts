import { type AgentOutput, isIdemError, type Job } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_EVENTS as E } from "../../src/index.js";
import { full } from "./full-store.js";
import { queue } from "./queue-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  summary: `wrote ${jobId}`,
  effects: [{ kind: "file.write", root: "out", path: `${jobId}.txt`, content: jobId }],
});
const job = (jobId: string): Job => ({ jobId, agent: "writer", input: { n: 1 } });
/** Leases that no test outlives: only `expireLeasesOf` can end them. */
const LONG = 600_000;
const claimAs = (owner: string) => ({ owner, leaseMs: LONG, maxLeaseExpiries: 3 });
const lost = (e: unknown) => isIdemError(e, "LEASE_LOST");

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's lease holders on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: { close(): Promise<void> }[] = [];
    const opened = async () => {
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

    it("names the owners of running runs and ends only the leases of the owners it is given", async () => {
      const j = full(await opened());
      for (const id of ["a", "b", "c", "d"]) {
        await j.outputs.record(out(id), { source: "cli", targets: [`root:${id}`] });
      }
      expect(await j.runs.leaseOwners()).toEqual([]);
      const a = await j.runs.claim(claimAs("dead-1"));
      const b = await j.runs.claim(claimAs("alive"));
      const c = await j.runs.claim(claimAs("dead-1"));
      expect([a, b, c].map((x) => x?.output.jobId)).toEqual(["a", "b", "c"]);
      expect((await j.runs.leaseOwners()).sort()).toEqual(["alive", "dead-1"]);
      const held = await j.runs.heldLeases();
      expect(held.map((h) => [h.owner, h.count, h.jobId]).sort()).toEqual([
        ["alive", 1, "b"],
        ["dead-1", 2, "a"],
      ]);
      const untilA = (await j.runs.latest("a"))?.leaseUntil;
      expect(held.find((h) => h.owner === "dead-1")?.firstUntil).toBe(untilA);
      expect(await j.runs.claim(claimAs("next"))).toMatchObject({ output: { jobId: "d" } });

      expect(await j.runs.expireLeasesOf([])).toBe(0);
      expect(await j.runs.expireLeasesOf(["nobody"])).toBe(0);
      expect(await j.runs.expireLeasesOf(["dead-1", "nobody"])).toBe(2);
      // Ended already: a second call finds nothing more to end.
      expect(await j.runs.expireLeasesOf(["dead-1"])).toBe(0);

      // Taken over at once, with an expiry's bookkeeping; the other holder's run is left alone.
      const taken = [await j.runs.claim(claimAs("next")), await j.runs.claim(claimAs("next"))];
      expect(taken.map((x) => [x?.output.jobId, x?.takeover, x?.run.leaseExpiries])).toEqual([
        ["a", true, 1],
        ["c", true, 1],
      ]);
      expect(await j.runs.claim(claimAs("next"))).toBeUndefined();
      const takeovers = await j.events.list({ jobId: "a", type: E.RUN_TAKEOVER });
      expect(takeovers.map((e) => [e.actor, e.data?.previousOwner])).toEqual([["next", "dead-1"]]);
      // The dead holder's token is stale; the new holder's lease is not ended by its old name.
      if (a) await expect(j.runs.complete(a.lease)).rejects.toSatisfy(lost);
      expect(await j.runs.expireLeasesOf(["dead-1"])).toBe(0);
      expect((await j.runs.leaseOwners()).sort()).toEqual(["alive", "next"]);
      if (b) await j.runs.complete(b.lease);
      expect(await j.runs.leaseOwners()).toEqual(["next"]);
    });

    it("ends the job deliveries of the owners it is given: the job is claimed again at once", async () => {
      const j = queue(await opened());
      await j.jobs.enqueue(job("q-1"));
      await j.jobs.enqueue(job("q-2"));
      const first = await j.jobs.claimNext({ owner: "dead-1", leaseMs: LONG });
      const second = await j.jobs.claimNext({ owner: "alive", leaseMs: LONG });
      expect([first?.job.jobId, second?.job.jobId]).toEqual(["q-1", "q-2"]);
      expect((await j.jobs.leaseOwners()).sort()).toEqual(["alive", "dead-1"]);
      expect((await j.jobs.heldLeases()).map((h) => [h.owner, h.count, h.jobId]).sort()).toEqual([
        ["alive", 1, "q-2"],
        ["dead-1", 1, "q-1"],
      ]);
      expect(await j.jobs.claimNext({ owner: "next", leaseMs: LONG })).toBeUndefined();
      expect(await j.jobs.claim(job("q-1"), { owner: "next", leaseMs: LONG })).toMatchObject({
        status: "held",
      });

      expect(await j.jobs.expireLeasesOf(["dead-1"])).toBe(1);
      const again = await j.jobs.claimNext({ owner: "next", leaseMs: LONG });
      expect(again?.job.jobId).toBe("q-1");
      expect(again?.lease.deliveries).toBe(2);
      if (first) await expect(j.jobs.extendLease(first.lease, LONG)).rejects.toSatisfy(lost);
      expect(await j.jobs.expireLeasesOf(["dead-1"])).toBe(0);
      expect((await j.jobs.leaseOwners()).sort()).toEqual(["alive", "next"]);
    });
  },
);
