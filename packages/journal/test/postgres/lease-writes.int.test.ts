import { type AgentOutput, isIdemError } from "@idem/schema";
import { type PostgresHandle, startPostgres } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { JOURNAL_EVENTS as E } from "../../src/index.js";
import type { Lease } from "../../src/port/runs.js";
import { PostgresConnection } from "../../src/store/postgres/connection.js";
import { postgresEvents } from "../../src/store/postgres/events.js";
import { postgresLedger } from "../../src/store/postgres/ledger.js";
import { postgresOutputs } from "../../src/store/postgres/outputs.js";
import { postgresRuns } from "../../src/store/postgres/runs.js";

const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  effects: [{ kind: "file.write", root: "out", path: `${jobId}.txt`, content: jobId }],
});
const CLAIM = { owner: "test", leaseMs: 600_000, maxLeaseExpiries: 3 };
const code = (r: PromiseSettledResult<void>) =>
  r.status === "fulfilled" ? "ok" : isIdemError(r.reason) ? r.reason.code : String(r.reason);

describe("PostgreSQL writes under a lease: the claim in one statement, group commit of intents, settles and completions", () => {
  let server: PostgresHandle;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("shares statements between runs that meet, and answers each as its own statement would", async () => {
    const c = await PostgresConnection.open(await server.createDatabase("lease_batch"), { max: 4 });
    try {
      const [outputs, runs, ledger, events] = [
        postgresOutputs(c),
        postgresRuns(c),
        postgresLedger(c),
        postgresEvents(c),
      ];
      const ids = ["a", "b", "c", "d", "e"];
      for (const id of ids) await outputs.record(out(id), { source: "cli", targets: [`t:${id}`] });
      const leases: Lease[] = [];
      for (const _ of ids) {
        const claim = await runs.claim(CLAIM);
        if (!claim) throw new Error("no claim");
        leases.push(claim.lease);
      }
      const [a, b, cc, d, e] = leases as [Lease, Lease, Lease, Lease, Lease];
      const stolen = { ...cc, token: "not-the-token" };
      const intent = (id: string) => ({
        key: `${id}/0`,
        idx: 0,
        kind: "file.write",
        specHash: "h",
      });
      await ledger.intend(cc, intent("c"));
      const spy = vi.spyOn(c, "statement");
      const intents = await Promise.allSettled([
        ledger.intend(a, intent("a")),
        ledger.intend(b, intent("b")),
        ledger.intend(stolen, intent("c")),
        ledger.intend(d, intent("d")),
        ledger.intend(e, intent("e")),
      ]);
      expect(intents.map((r) => (r.status === "fulfilled" ? r.value.key : r.reason.code))).toEqual([
        "a/0",
        "b/0",
        "LEASE_LOST",
        "d/0",
        "e/0",
      ]);
      expect(spy.mock.calls.filter(([q]) => q.name === "idem_intend_batch")).toHaveLength(1);
      // Intended again under its lease (its row is there): answered from the transaction.
      expect((await ledger.intend(cc, intent("c"))).attempts).toBe(2);
      expect((await events.list({ type: E.EFFECT_INTENDED })).map((x) => x.jobId).sort()).toEqual([
        "a",
        "b",
        "c",
        "c",
        "d",
        "e",
      ]);
      spy.mockRestore();
      const statement = vi.spyOn(c, "statement");
      // Called in one tick: they go together, in one statement.
      const settles = await Promise.allSettled([
        ledger.settle(a, "a/0", "applied", { n: 1 }, { soon: true }),
        ledger.settle(b, "b/0", "applied", { n: 2 }, { soon: true }),
        ledger.settle(stolen, "c/0", "applied", undefined, { soon: true }),
        ledger.settle(d, "d/9", "applied", undefined, { soon: true }),
        ledger.settle(e, "e/0", "present", undefined, { soon: true }),
      ]);
      expect(settles.map(code)).toEqual(["ok", "ok", "LEASE_LOST", "INVALID_STATE", "ok"]);
      const batches = statement.mock.calls.filter(([q]) => q.name === "idem_settle_batch_soon");
      expect(batches).toHaveLength(1);
      expect(batches[0]?.[0].values?.[0]).toHaveLength(5);
      expect((await ledger.forJob("b", 1))[0]).toMatchObject({
        state: "applied",
        detail: { n: 2 },
      });
      expect((await ledger.forJob("c", 1))[0]?.state).toBe("intended");

      statement.mockClear();
      const completes = await Promise.allSettled([
        runs.complete(a, { soon: true }),
        runs.complete(b, { soon: true }),
        runs.complete(stolen, { soon: true }),
        runs.complete(d, { soon: true }),
        runs.complete(e, { soon: true }),
      ]);
      expect(completes.map(code)).toEqual(["ok", "ok", "LEASE_LOST", "INVALID_STATE", "ok"]);
      expect(
        statement.mock.calls.filter(([q]) => q.name === "idem_complete_batch_soon"),
      ).toHaveLength(1);
      const states = await Promise.all(ids.map(async (id) => (await runs.latest(id))?.state));
      expect(states).toEqual(["done", "done", "running", "running", "done"]);
      // Each write's event with it, once, and none for a write refused.
      const typed = async (type: string) =>
        (await events.list({ type })).map((x) => x.jobId).sort();
      expect(await typed(E.EFFECT_APPLIED)).toEqual(["a", "b"]);
      expect(await typed(E.RUN_DONE)).toEqual(["a", "b", "e"]);
      // The active targets of the runs done are released: a new run on them is claimable.
      await runs.complete(d, undefined).catch(() => {});
      await ledger.settle(d, "d/0", "applied", undefined, undefined);
      await runs.complete(d, undefined);
      expect((await runs.latest("d"))?.state).toBe("done");
    } finally {
      await c.close();
    }
  });

  it("hands a claim the job's ledger read with it, except a takeover's (its late holder may still write)", async () => {
    const c = await PostgresConnection.open(await server.createDatabase("claim_history"), {
      max: 4,
    });
    try {
      const [outputs, runs, ledger] = [postgresOutputs(c), postgresRuns(c), postgresLedger(c)];
      await outputs.record(out("a"), { source: "cli", targets: ["t:a"] });
      const first = await runs.claim({ ...CLAIM, leaseMs: 1 });
      expect(first?.history).toEqual([]);
      if (!first) throw new Error("no claim");
      await ledger.intend(first.lease, { key: "a/0", idx: 0, kind: "file.write", specHash: "h" });
      let taken: Awaited<ReturnType<typeof runs.claim>>;
      for (;;) {
        taken = await runs.claim({ ...CLAIM, owner: "next" });
        if (taken) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(taken.takeover).toBe(true);
      expect(taken.history).toBeUndefined();
      expect((await ledger.history("a/0")).map((e) => e.state)).toEqual(["intended"]);
    } finally {
      await c.close();
    }
  });
});
