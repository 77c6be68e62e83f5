import { type AgentOutput, isIdemError } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_EVENTS as E, type Lease } from "../../src/index.js";
import { another, type FullStore, full, until } from "./full-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  summary: `wrote ${jobId}`,
  effects: [{ kind: "file.write", root: "out", path: `${jobId}.txt`, content: jobId }],
});
/** Leases long enough that none expires during a test unless the test waits for it. */
const CLAIM = { owner: "test", leaseMs: 600_000, maxLeaseExpiries: 3 };
const lost = (e: unknown) => isIdemError(e, "LEASE_LOST");

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's runs on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: FullStore[] = [];
    const store = async () => {
      const s = full(await factory.open());
      open.push(s);
      return s;
    };
    const second = async (s: FullStore, options?: Parameters<typeof another>[2]) => {
      const t = await another(factory, s, options);
      open.push(t);
      return t;
    };
    beforeAll(() => {
      factory = make();
    });
    afterAll(async () => {
      for (const s of open) await s.close();
      await factory.teardown();
    });

    it("claims in recording order per target and lets other targets proceed", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: ["repo:site@main"] });
      await j.outputs.record(out("b"), { source: "cli", targets: ["repo:site@main"] });
      await j.outputs.record(out("c"), { source: "cli", targets: ["root:outbox"] });
      const first = await j.runs.claim(CLAIM);
      const second = await j.runs.claim(CLAIM);
      expect([first?.output.jobId, second?.output.jobId]).toEqual(["a", "c"]);
      expect(await j.runs.claim(CLAIM)).toBeUndefined();
      expect(first?.output.output).toEqual(out("a"));
      expect(first?.run).toMatchObject({ state: "running", leaseOwner: "test", generation: 1 });
      if (first) await j.runs.complete(first.lease);
      expect((await j.runs.claim(CLAIM))?.output.jobId).toBe("b");
      expect(await j.runs.active()).toEqual({ pending: 0, running: 2, failed: 0 });
    });

    it("holds a run with several targets ahead on each of them", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: ["root:x", "root:y"] });
      await j.outputs.record(out("b"), { source: "cli", targets: ["root:y"] });
      await j.outputs.record(out("c"), { source: "cli", targets: ["root:x"] });
      await j.outputs.record(out("d"), { source: "cli", targets: ["root:z"] });
      const a = await j.runs.claim(CLAIM);
      expect(a?.output.jobId).toBe("a");
      expect((await j.runs.claim(CLAIM))?.output.jobId).toBe("d");
      expect(await j.runs.claim(CLAIM)).toBeUndefined();
      if (a) await j.runs.complete(a.lease);
      const next = [await j.runs.claim(CLAIM), await j.runs.claim(CLAIM)];
      expect(next.map((c) => c?.output.jobId)).toEqual(["b", "c"]);
    });

    it("claims a follower only behind runs the same owner holds under unexpired leases (pipelining)", async () => {
      const j = await store();
      const rec = (jobId: string, targets: string[]) =>
        j.outputs.record(out(jobId), { source: "cli", targets });
      await rec("a", ["repo:site@main"]);
      await rec("b", ["repo:site@main", "root:x"]);
      await rec("c", ["root:x"]);
      await rec("d", ["repo:site@main"]);
      await rec("e", ["root:z"]);
      const A = { ...CLAIM, owner: "A" };
      const B = { ...CLAIM, owner: "B" };
      const a = await j.runs.claim({ ...A, follow: "also" });
      expect(a?.output.jobId).toBe("a");
      // b follows a (both A's); c follows b on root:x.
      const b = await j.runs.claim({ ...A, follow: "only" });
      expect((await j.runs.claim({ ...A, follow: "only" }))?.output.jobId).toBe("c");
      expect(b?.output.jobId).toBe("b");
      // Another owner follows none of A's runs; "only" gives it no independent run either.
      expect(await j.runs.claim({ ...B, follow: "only" })).toBeUndefined();
      expect((await j.runs.claim({ ...B, follow: "also" }))?.output.jobId).toBe("e");
      if (!a || !b) throw new Error("claim");
      // A's expired lease on a blocks d, and a goes to whoever takes it over.
      await j.runs.extendLease(a.lease, 1);
      await new Promise((r) => setTimeout(r, 30));
      expect(await j.runs.claim({ ...A, follow: "only" })).toBeUndefined();
      const taken = await j.runs.claim(B);
      expect([taken?.output.jobId, taken?.takeover]).toEqual(["a", true]);
      if (taken) await j.runs.complete(taken.lease);
      // With a done, d follows b alone.
      expect((await j.runs.claim({ ...A, follow: "only" }))?.output.jobId).toBe("d");
      // A run of A's that failed (waiting for its retry) blocks whatever comes after it.
      await rec("f", ["root:x"]);
      await j.runs.fail(b.lease, { class: "transient", error: "x", nextAt: Date.now() + 600_000 });
      expect(await j.runs.claim({ ...A, follow: "also" })).toBeUndefined();
    });

    it("never gives one target to two holders at once, over several stores claiming concurrently, and keeps recording order per target", async () => {
      const j = await store();
      const stores = [j, await second(j), await second(j), await second(j)];
      const targets = ["root:p", "root:q", "root:r"];
      const recorded = new Map<string, string[]>(targets.map((t) => [t, []]));
      for (let i = 0; i < 36; i++) {
        // Every fourth output holds two targets: it must wait on both.
        const mine = i % 4 === 3 ? [targets[i % 3], targets[(i + 1) % 3]] : [targets[i % 3]];
        const ts = mine as string[];
        await j.outputs.record(out(`o${i}`), { source: "cli", targets: ts });
        for (const t of ts) recorded.get(t)?.push(`o${i}`);
      }
      const holder = new Map<string, string>();
      const order = new Map<string, string[]>(targets.map((t) => [t, []]));
      const overlaps: string[] = [];
      let done = 0;
      await Promise.all(
        stores.flatMap((s, n) =>
          [0, 1].map(async (k) => {
            while (done < 36) {
              const c = await s.runs.claim({ ...CLAIM, owner: `w${n}.${k}` });
              if (!c) {
                await new Promise((r) => setTimeout(r, 2));
                continue;
              }
              for (const t of c.run.targets) {
                const h = holder.get(t);
                if (h !== undefined) overlaps.push(`${t}: ${h} and ${c.output.jobId}`);
                holder.set(t, c.output.jobId);
                order.get(t)?.push(c.output.jobId);
              }
              await new Promise((r) => setImmediate(r));
              // Let go in the model before the store does: a claim seen after this is still fenced
              // by the store until the commit of `complete`.
              for (const t of c.run.targets) holder.delete(t);
              await s.runs.complete(c.lease);
              done++;
            }
          }),
        ),
      );
      expect(overlaps).toEqual([]);
      expect(order).toEqual(recorded);
      expect(await j.runs.active()).toEqual({ pending: 0, running: 0, failed: 0 });
      expect(await j.events.count([E.RUN_CLAIMED, E.RUN_DONE, E.RUN_TAKEOVER])).toEqual({
        [E.RUN_CLAIMED]: 36,
        [E.RUN_DONE]: 36,
        [E.RUN_TAKEOVER]: 0,
      });
    });

    it("takes over an expired lease from another store and fences the old holder: its every write is LEASE_LOST and changes nothing", async () => {
      const j = await store();
      const other = await second(j);
      await j.outputs.record(out("a"), { source: "cli", targets: ["root:x"] });
      const stale = await j.runs.claim({ ...CLAIM, owner: "old", leaseMs: 50 });
      if (!stale) throw new Error("claim");
      const fresh = await until(
        () => other.runs.claim({ ...CLAIM, owner: "new" }),
        "the expired lease to be taken over",
      );
      expect(fresh.takeover).toBe(true);
      expect(fresh.run).toMatchObject({ leaseExpiries: 1, attempts: 0, leaseOwner: "new" });
      expect(fresh.lease.token).not.toBe(stale.lease.token);
      const before = {
        run: await j.runs.latest("a"),
        events: (await j.events.list({ jobId: "a" })).length,
      };
      const key = "a/0";
      const writes: (() => Promise<unknown>)[] = [
        () => j.runs.complete(stale.lease),
        () => j.runs.fail(stale.lease, { class: "transient", error: "x", nextAt: 0 }),
        () => j.runs.extendLease(stale.lease, 1000),
        () => j.runs.release(stale.lease),
        () => j.runs.markDead(stale.lease, { class: "logic", error: "x" }),
        () => j.ledger.intend(stale.lease, { key, idx: 0, kind: "file.write", specHash: "h" }),
        () => j.ledger.settle(stale.lease, key, "applied"),
      ];
      for (const write of writes) await expect(write()).rejects.toSatisfy(lost);
      expect(await j.runs.latest("a")).toEqual(before.run);
      expect(await j.ledger.forJob("a")).toEqual([]);
      expect(await j.events.list({ jobId: "a" })).toHaveLength(before.events);
      // The new holder's writes go through.
      await other.ledger.intend(fresh.lease, { key, idx: 0, kind: "file.write", specHash: "h" });
      await expect(j.ledger.settle(stale.lease, key, "applied")).rejects.toSatisfy(lost);
      expect((await j.ledger.forJob("a"))[0]?.state).toBe("intended");
      await other.ledger.settle(fresh.lease, key, "applied");
      await other.runs.complete(fresh.lease);
      expect((await j.runs.latest("a"))?.state).toBe("done");
    });

    it("goes dead after maxLeaseExpiries takeovers and releases its target, naming the runs that went ahead", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: ["root:x"] });
      await j.outputs.record(out("b"), { source: "cli", targets: ["root:x"] });
      const short = { ...CLAIM, leaseMs: 20 };
      expect((await j.runs.claim(short))?.output.jobId).toBe("a");
      for (let i = 1; i < 3; i++) {
        const c = await until(() => j.runs.claim(short), `takeover ${i}`);
        expect([c.output.jobId, c.takeover, c.run.leaseExpiries]).toEqual(["a", true, i]);
      }
      const next = await until(() => j.runs.claim(CLAIM), "the run after the dead one");
      expect(next.output.jobId).toBe("b");
      const a = await j.runs.latest("a");
      expect(a).toMatchObject({ state: "dead", class: "infrastructure", leaseOwner: null });
      expect(a?.lastError).toMatch(/go ahead: b/);
      const dead = await j.events.list({ jobId: "a", type: E.RUN_DEAD });
      expect(dead[0]?.data?.wentAhead).toEqual(["b"]);
    });

    it("fails with a retry time, not due before it, and counts the attempt; releases without counting", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: [] });
      const c = await j.runs.claim(CLAIM);
      if (!c) throw new Error("claim");
      await j.runs.fail(c.lease, {
        class: "transient",
        error: "locked",
        nextAt: Date.now() + 600_000,
      });
      expect(await j.runs.claim(CLAIM)).toBeUndefined();
      const failed = await j.runs.latest("a");
      expect(failed).toMatchObject({
        state: "failed",
        attempts: 1,
        class: "transient",
        lastError: "locked",
      });
      expect(await j.runs.nextDueAt()).toBe(failed?.nextAt);
      expect(await j.runs.active()).toEqual({ pending: 0, running: 0, failed: 1 });
      await j.outputs.record(out("b"), { source: "cli", targets: [] });
      const b = await j.runs.claim(CLAIM);
      if (!b) throw new Error("claim b");
      await j.runs.release(b.lease);
      const again = await j.runs.claim(CLAIM);
      expect([again?.output.jobId, again?.takeover, again?.run.attempts]).toEqual(["b", false, 0]);
      const types = (await j.events.list({ jobId: "b" })).map((e) => e.type);
      expect(types).toEqual([E.OUTPUT_RECORDED, E.RUN_CLAIMED, E.RUN_RELEASED, E.RUN_CLAIMED]);
    });

    it("extends a held lease and refuses to complete a run with an unsettled effect", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: [] });
      const c = await j.runs.claim({ ...CLAIM, leaseMs: 1000 });
      if (!c) throw new Error("claim");
      const longer = await j.runs.extendLease(c.lease, 600_000);
      expect(longer.until).toBeGreaterThan(c.lease.until);
      expect((await j.runs.latest("a"))?.leaseUntil).toBe(longer.until);
      await j.ledger.intend(c.lease, { key: "a/0", idx: 0, kind: "file.write", specHash: "h" });
      await expect(j.runs.complete(c.lease)).rejects.toSatisfy((e) =>
        isIdemError(e, "INVALID_STATE"),
      );
      expect((await j.runs.latest("a"))?.state).toBe("running");
      await j.ledger.settle(c.lease, "a/0", "present");
      await j.runs.complete(longer);
      expect((await j.runs.forJob("a")).map((r) => r.state)).toEqual(["done"]);
    });

    it("replays into the next generation, never beside an active run, and reads latest runs in bulk", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: ["root:x"] });
      await j.outputs.record(out("b"), { source: "cli", targets: [] });
      const c = await j.runs.claim(CLAIM);
      if (!c) throw new Error("claim");
      await j.runs.complete(c.lease);
      const runs = await j.runs.replay({ all: true }, { actor: "human", forceUnprobeable: true });
      expect(runs.map((r) => [r.jobId, r.generation, r.forceUnprobeable, r.targets])).toEqual([
        ["a", 2, true, ["root:x"]],
      ]);
      expect(await j.runs.replay({ jobIds: ["a", "b"] }, { actor: "human" })).toEqual([]);
      const latest = await j.runs.latestOf(["a", "b", "missing"]);
      expect(Object.fromEntries(latest)).toEqual({
        a: { generation: 2, state: "pending" },
        b: { generation: 1, state: "pending" },
      });
      expect((await j.runs.forJob("a")).map((r) => r.generation)).toEqual([1, 2]);
      expect(await j.runs.latest("missing")).toBeUndefined();
      const replayed = await j.events.list({ jobId: "a", type: E.RUN_REPLAYED });
      expect(replayed.map((e) => [e.actor, e.data])).toEqual([
        [
          "human",
          {
            generation: 2,
            forceUnprobeable: true,
            // The lineage the run carries (issue 22): a replay through the journal API has no reason.
            actor: "human",
            reason: null,
            selection: { all: true },
            replaysGeneration: 1,
            only: null,
          },
        ],
      ]);
    });

    it("replays one output once when two stores replay it at the same time", async () => {
      const j = await store();
      const other = await second(j);
      await j.outputs.record(out("a"), { source: "cli", targets: [] });
      const c = await j.runs.claim(CLAIM);
      if (!c) throw new Error("claim");
      await j.runs.complete(c.lease);
      const both = await Promise.all([
        j.runs.replay({ jobIds: ["a"] }, { actor: "one" }),
        other.runs.replay({ jobIds: ["a"] }, { actor: "two" }),
      ]);
      expect(both.flat().map((r) => r.generation)).toEqual([2]);
    });

    it("leases only the holder's writes: a lease token is fresh per claim", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: [] });
      const c = await j.runs.claim(CLAIM);
      if (!c) throw new Error("claim");
      const forged: Lease = { ...c.lease, token: `${c.lease.token}-forged` };
      await expect(j.runs.complete(forged)).rejects.toSatisfy(lost);
      await j.runs.complete(c.lease);
      await expect(j.runs.complete(c.lease)).rejects.toSatisfy(lost);
    });

    it("hands a claim's history of the job's ledger as ledger.history reads it, and writes its event's data", async () => {
      const j = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: ["root:out"] });
      await j.outputs.record(out("z"), { source: "cli", targets: ["root:other"] });
      const first = await j.runs.claim(CLAIM);
      if (!first) throw new Error("no claim");
      expect(first.history ?? []).toEqual([]);
      await j.ledger.intend(first.lease, { key: "a/0", idx: 0, kind: "file.write", specHash: "h" });
      await j.ledger.settle(first.lease, "a/0", "applied", { n: 1 });
      await j.runs.complete(first.lease);
      const z = await j.runs.claim(CLAIM);
      if (z) await j.runs.complete(z.lease);
      await j.runs.replay({ jobIds: ["a"] }, { actor: "oncall" });
      const again = await j.runs.claim({ ...CLAIM, owner: "second" });
      expect(again?.run.generation).toBe(2);
      // Another job's rows are never in it; a store that reads none with the claim gives none.
      if (again?.history !== undefined)
        expect(again.history).toEqual(await j.ledger.history("a/0"));
      // PostgreSQL reads it with the claim (one round trip for both).
      if (_name === "postgres") expect(again?.history).toHaveLength(1);
      const claimed = await j.events.list({ jobId: "a", type: E.RUN_CLAIMED });
      expect(claimed.map((e) => [e.actor, e.data])).toEqual([
        ["test", { generation: 1, previousOwner: null, attempts: 0 }],
        ["second", { generation: 2, previousOwner: null, attempts: 0 }],
      ]);
    });
  },
);
