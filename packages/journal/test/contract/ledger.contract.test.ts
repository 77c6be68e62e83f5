import { type AgentOutput, isIdemError, ManualClock } from "@idem/schema";
import { ignoreServerShutdown } from "@idem/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_EVENTS as E } from "../../src/index.js";
import { another, type FullStore, full } from "./full-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  summary: `wrote ${jobId}`,
  effects: [{ kind: "file.write", root: "out", path: `${jobId}.txt`, content: jobId }],
});
const CLAIM = { owner: "test", leaseMs: 600_000, maxLeaseExpiries: 3 };
const code = (c: string) => (e: unknown) => isIdemError(e, c as never);

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's effects ledger on %s",
  (name, make) => {
    let factory: StoreFactory;
    const open: FullStore[] = [];
    const store = async () => {
      const s = full(await factory.open());
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
    const claimed = async (j: FullStore, jobId: string, targets: string[] = []) => {
      await j.outputs.record(out(jobId), { source: "cli", targets });
      const c = await j.runs.claim(CLAIM);
      if (!c) throw new Error("claim");
      return c;
    };

    it("keeps a ledger per generation: intend is idempotent, reopens failed, and replays start empty", async () => {
      const j = await store();
      const c = await claimed(j, "a");
      const intent = { key: "a/0", idx: 0, kind: "git.commit", specHash: "h" };
      const e = await j.ledger.intend(c.lease, { ...intent, detail: { base: "b1" } });
      expect(e).toMatchObject({ state: "intended", attempts: 1, generation: 1, jobId: "a" });
      const again = await j.ledger.intend(c.lease, intent);
      expect([again.attempts, again.detail]).toEqual([2, { base: "b1" }]);
      await j.ledger.settle(c.lease, "a/0", "failed", { reason: "conflict" });
      const reopened = await j.ledger.intend(c.lease, intent);
      expect([reopened.state, reopened.attempts, reopened.detail]).toEqual([
        "intended",
        3,
        { reason: "conflict" },
      ]);
      const reopenedEvent = (await j.events.list({ jobId: "a", type: E.EFFECT_INTENDED }))[2];
      expect(reopenedEvent?.data).toEqual({
        key: "a/0",
        generation: 1,
        attempt: 3,
        previous: "failed",
      });
      await j.ledger.settle(c.lease, "a/0", "applied", { commit: "c1" });
      // A settled effect is answered as it is.
      expect((await j.ledger.intend(c.lease, intent)).state).toBe("applied");
      await expect(j.ledger.settle(c.lease, "a/9", "applied")).rejects.toSatisfy(
        code("INVALID_STATE"),
      );
      await j.runs.complete(c.lease);
      expect(
        (await j.runs.replay({ all: true }, { actor: "human" })).map((r) => r.generation),
      ).toEqual([2]);
      expect(await j.ledger.forJob("a", 2)).toEqual([]);
      expect((await j.ledger.forJob("a")).map((x) => [x.key, x.generation, x.detail])).toEqual([
        ["a/0", 1, { commit: "c1" }],
      ]);
      const c2 = await j.runs.claim(CLAIM);
      if (!c2) throw new Error("claim 2");
      await j.ledger.intend(c2.lease, intent);
      expect((await j.ledger.history("a/0")).map((x) => [x.generation, x.state])).toEqual([
        [1, "applied"],
        [2, "intended"],
      ]);
      const ofJobs = await j.ledger.ofJobs(["a", "missing"]);
      expect(Object.fromEntries(ofJobs)).toEqual({
        "a/0": [
          { generation: 1, state: "applied" },
          { generation: 2, state: "intended" },
        ],
      });
      const types = (await j.events.list({ jobId: "a" })).map((x) => x.type);
      expect(types.filter((t) => t.startsWith("effect."))).toEqual([
        E.EFFECT_INTENDED,
        E.EFFECT_INTENDED,
        E.EFFECT_FAILED,
        E.EFFECT_INTENDED,
        E.EFFECT_APPLIED,
        E.EFFECT_INTENDED,
      ]);
    });

    it("resolves an uncertain effect of a dead run with a reason, back in its place on its target", async () => {
      const j = await store();
      const c = await claimed(j, "a", ["root:x"]);
      await j.ledger.intend(c.lease, { key: "a/0", idx: 0, kind: "http.request", specHash: "h" });
      await j.ledger.settle(c.lease, "a/0", "uncertain");
      await expect(
        j.ledger.resolve("a", { decision: "applied", reason: "r", actor: "oncall" }),
      ).rejects.toSatisfy(code("INVALID_STATE"));
      await j.runs.markDead(c.lease, { class: "uncertain", error: "timeout after send" });
      await j.outputs.record(out("b"), { source: "cli", targets: ["root:x"] });
      await expect(
        j.ledger.resolve("a", { decision: "applied", reason: " ", actor: "oncall" }),
      ).rejects.toSatisfy(code("INVALID_INPUT"));
      await expect(
        j.ledger.resolve("none", { decision: "applied", reason: "r", actor: "oncall" }),
      ).rejects.toSatisfy(code("NOT_FOUND"));
      await expect(
        j.ledger.resolve("a", {
          decision: "applied",
          reason: "r",
          actor: "oncall",
          expectKey: "a/7",
        }),
      ).rejects.toSatisfy(code("INVALID_STATE"));
      const r = await j.ledger.resolve("a", {
        decision: "applied",
        reason: "saw it in the webhook logs",
        actor: "oncall",
        expectKey: "a/0",
      });
      expect(r.state).toBe("applied");
      expect(r.detail).toMatchObject({
        resolvedBy: "oncall",
        reason: "saw it in the webhook logs",
      });
      expect(await j.runs.latest("a")).toMatchObject({
        state: "pending",
        attempts: 0,
        class: null,
      });
      const ev = (await j.events.list({ jobId: "a", type: E.EFFECT_RESOLVED }))[0];
      expect([ev?.actor, ev?.data?.reason, ev?.data?.previous]).toEqual([
        "oncall",
        "saw it in the webhook logs",
        "uncertain",
      ]);
      // a is first on root:x again: b waits until a is done.
      const again = await j.runs.claim(CLAIM);
      expect(again?.output.jobId).toBe("a");
      expect(await j.runs.claim(CLAIM)).toBeUndefined();
      if (again) await j.runs.complete(again.lease);
      expect((await j.runs.claim(CLAIM))?.output.jobId).toBe("b");
    });

    it("refuses to put a resolved run back on a target a later run holds (never two holders), and resolves once it is done", async () => {
      const j = await store();
      const c = await claimed(j, "a", ["root:x", "root:y"]);
      await j.ledger.intend(c.lease, { key: "a/0", idx: 0, kind: "http.request", specHash: "h" });
      await j.ledger.settle(c.lease, "a/0", "uncertain");
      await j.runs.markDead(c.lease, { class: "uncertain", error: "timeout after send" });
      // b went ahead on root:y and holds it now.
      const b = await claimed(j, "b", ["root:y"]);
      expect(b.run.jobId).toBe("b");
      const refused = await j.ledger
        .resolve("a", { decision: "applied", reason: "seen in the logs", actor: "oncall" })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(code("INVALID_STATE")(refused)).toBe(true);
      expect((refused as Error).message).toMatch(/\bb\b/);
      // Nothing written: a stays dead with its effect open, and nobody else can claim a.
      expect((await j.runs.latest("a"))?.state).toBe("dead");
      expect((await j.ledger.forJob("a"))[0]?.state).toBe("uncertain");
      expect(await j.events.list({ jobId: "a", type: E.EFFECT_RESOLVED })).toEqual([]);
      expect(await j.runs.claim(CLAIM)).toBeUndefined();
      // Once b is done, the resolution goes through and a is first on its targets again.
      await j.runs.complete(b.lease);
      expect(
        (
          await j.ledger.resolve("a", {
            decision: "applied",
            reason: "seen in the logs",
            actor: "oncall",
          })
        ).state,
      ).toBe("applied");
      expect((await j.runs.claim(CLAIM))?.output.jobId).toBe("a");
    });

    it(
      name === "postgres"
        ? "computes leases and retry times by the server's now(), whatever the host's clock says (PostgreSQL only: its hosts' clocks differ)"
        : "computes leases and retry times by the journal's clock (SQLite: one host, its injected clock)",
      async () => {
        const j = await store();
        // A host whose clock is years behind.
        const clock = new ManualClock(1_700_000_000_000);
        const host = await another(factory, j, { clock });
        open.push(host);
        await host.outputs.record(out("a"), { source: "cli", targets: [] });
        if (name === "sqlite") {
          const c = await host.runs.claim({ ...CLAIM, leaseMs: 5000 });
          expect(c?.lease.until).toBe(clock.now() + 5000);
          if (!c) return;
          await host.runs.fail(c.lease, {
            class: "transient",
            error: "x",
            nextAt: clock.now() + 700,
          });
          expect(await host.runs.nextDueAt()).toBe(clock.now() + 700);
          return;
        }
        const server = new pg.Client({ connectionString: j.location });
        server.on("error", ignoreServerShutdown);
        await server.connect();
        const now = async () =>
          Number(
            (
              await server.query<{ t: string }>(
                "SELECT (extract(epoch from now()) * 1000)::bigint AS t",
              )
            ).rows[0]?.t,
          );
        try {
          const before = await now();
          const c = await host.runs.claim({ ...CLAIM, leaseMs: 5000 });
          const after = await now();
          if (!c) throw new Error("claim");
          expect(c.lease.until).toBeGreaterThanOrEqual(before + 5000);
          expect(c.lease.until).toBeLessThanOrEqual(after + 5000);
          const extended = await host.runs.extendLease(c.lease, 9000);
          expect(extended.until).toBeGreaterThanOrEqual(after + 9000);
          expect(extended.until).toBeLessThanOrEqual((await now()) + 9000);
          const beforeFail = await now();
          await host.runs.fail(extended, {
            class: "transient",
            error: "x",
            nextAt: clock.now() + 700,
          });
          const afterFail = await now();
          const run = await host.runs.latest("a");
          expect(run?.nextAt).toBeGreaterThanOrEqual(beforeFail + 700);
          expect(run?.nextAt).toBeLessThanOrEqual(afterFail + 700);
          expect(await host.runs.nextDueAt()).toBe(run?.nextAt);
        } finally {
          await server.end();
        }
      },
    );
  },
);
