import { type AgentOutput, type IdemError, isIdemError, ManualClock } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_EVENTS as E, type JournalStore } from "../../src/index.js";
import { STORES, type StoreFactory } from "./stores.js";

const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  summary: `wrote ${jobId}`,
  effects: [
    { kind: "file.write", root: "out", path: `${jobId}.txt`, content: jobId },
    { kind: "file.write", root: "out", path: `${jobId}-2.txt`, content: jobId },
  ],
});
const CLAIM = { owner: "test", leaseMs: 600_000, maxLeaseExpiries: 3 };
const T0 = 1_800_000_000_000;
const HOUR = 3_600_000;

/** The code and field of what a call threw. */
async function refusal(p: Promise<unknown>): Promise<{ code: string; field: unknown }> {
  try {
    await p;
  } catch (e) {
    if (!isIdemError(e)) throw e;
    return { code: e.code, field: (e as IdemError).details?.field };
  }
  throw new Error("expected a refusal");
}

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's approval gates on %s",
  (_name, make) => {
    let factory: StoreFactory;
    const open: JournalStore[] = [];
    const store = async () => {
      const clock = new ManualClock(T0);
      const j = (await factory.open({ clock })) as unknown as JournalStore;
      open.push(j);
      return { j, clock };
    };
    beforeAll(() => {
      factory = make();
    });
    afterAll(async () => {
      for (const s of open) await s.close();
      await factory.teardown();
    });

    /** Records `jobId` and parks its run awaiting approval of effect 1; answers its digest. */
    const parked = async (j: JournalStore, jobId: string, targets = ["root:out"]) => {
      await j.outputs.record(out(jobId), { source: "cli", targets });
      const claim = await j.runs.claim(CLAIM);
      if (!claim) throw new Error("nothing claimed");
      const digest = claim.output.contentHash;
      const request = { digest, effects: [1], rules: ["prs"], expiresAt: T0 + HOUR };
      await j.approvals.request(claim.lease, request);
      return { digest, claim };
    };

    it("parks a run awaiting: no lease, never claimed, its targets held, listed", async () => {
      const { j } = await store();
      const { digest } = await parked(j, "a");
      await j.outputs.record(out("b"), { source: "cli", targets: ["root:out"] });
      expect(await j.runs.claim(CLAIM)).toBeUndefined();
      const run = await j.runs.latest("a");
      expect(run).toMatchObject({ state: "awaiting", leaseOwner: null, leaseUntil: null });
      const waiting = await j.approvals.awaiting();
      expect(waiting).toEqual([
        {
          jobId: "a",
          generation: 1,
          agent: "writer",
          since: T0,
          request: { digest, effects: [1], rules: ["prs"], expiresAt: T0 + HOUR },
        },
      ]);
      const [event] = await j.events.list({ jobId: "a", type: E.APPROVAL_REQUESTED });
      expect(event?.data).toMatchObject({ generation: 1, digest, effects: [1] });
    });

    it("an approval bound to the digest and effects makes the run due again", async () => {
      const { j } = await store();
      const { digest } = await parked(j, "a");
      const base = {
        jobId: "a",
        generation: 1,
        approve: true,
        digest,
        effects: [1],
        actor: "ana",
        reason: "looks right",
        expiresAt: T0 + HOUR,
      };
      expect(await refusal(j.approvals.decide({ ...base, digest: "0".repeat(64) }))).toEqual({
        code: "INVALID_STATE",
        field: "digest",
      });
      expect(await refusal(j.approvals.decide({ ...base, effects: [0] }))).toEqual({
        code: "INVALID_STATE",
        field: "effects",
      });
      expect(await refusal(j.approvals.decide({ ...base, generation: 2 }))).toEqual({
        code: "INVALID_STATE",
        field: "generation",
      });
      expect((await refusal(j.approvals.decide({ ...base, reason: " " }))).code).toBe(
        "INVALID_INPUT",
      );
      expect((await j.runs.latest("a"))?.state).toBe("awaiting");
      await j.approvals.decide(base);
      // Single-use: the run is no longer awaiting, so the same decision is refused.
      expect(await refusal(j.approvals.decide(base))).toEqual({
        code: "INVALID_STATE",
        field: "state",
      });
      const claim = await j.runs.claim(CLAIM);
      expect(claim?.run).toMatchObject({ jobId: "a", state: "running" });
      const [granted] = await j.events.list({ jobId: "a", type: E.APPROVAL_GRANTED });
      expect(granted).toMatchObject({ actor: "ana" });
      expect(granted?.data).toMatchObject({ digest, effects: [1], reason: "looks right" });
    });

    it("a rejection ends the run dead, class rejected, and frees its targets", async () => {
      const { j } = await store();
      const { digest } = await parked(j, "a");
      await j.outputs.record(out("b"), { source: "cli", targets: ["root:out"] });
      await j.approvals.decide({
        jobId: "a",
        generation: 1,
        approve: false,
        digest,
        effects: [1],
        actor: "ana",
        reason: "not on main",
        expiresAt: T0 + HOUR,
      });
      const run = await j.runs.latest("a");
      expect(run).toMatchObject({ state: "dead", class: "rejected" });
      expect(run?.lastError).toContain("rejected by ana: not on main");
      expect((await j.runs.claim(CLAIM))?.output.jobId).toBe("b");
      const [rejected] = await j.events.list({ jobId: "a", type: E.APPROVAL_REJECTED });
      expect(rejected?.data).toMatchObject({ reason: "not on main" });
    });

    it("an expired request fails closed: no approval, and the sweep ends it", async () => {
      const { j, clock } = await store();
      const { digest } = await parked(j, "a");
      expect(await j.approvals.expire()).toEqual([]);
      clock.advance(HOUR);
      const decision = {
        jobId: "a",
        generation: 1,
        approve: true,
        digest,
        effects: [1],
        actor: "ana",
        reason: "late",
        expiresAt: T0 + 2 * HOUR,
      };
      expect(await refusal(j.approvals.decide(decision))).toEqual({
        code: "INVALID_STATE",
        field: "expiresAt",
      });
      expect(await j.approvals.expire()).toEqual(["a"]);
      expect(await j.runs.latest("a")).toMatchObject({ state: "dead", class: "rejected" });
      expect(await j.events.list({ jobId: "a", type: E.APPROVAL_EXPIRED })).toHaveLength(1);
    });

    it("only the lease holder parks a run", async () => {
      const { j } = await store();
      await j.outputs.record(out("a"), { source: "cli", targets: ["root:out"] });
      const claim = await j.runs.claim(CLAIM);
      if (!claim) throw new Error("nothing claimed");
      const stale = { ...claim.lease, token: "stale" };
      const request = { digest: "d", effects: [0], rules: [], expiresAt: T0 + HOUR };
      expect((await refusal(j.approvals.request(stale, request))).code).toBe("LEASE_LOST");
    });
  },
);
