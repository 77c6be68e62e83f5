import type { JournalStore } from "@idem/journal";
import { parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { listDeadLetters } from "../src/dead-letters/list-dead-letters.js";
import { resolveUncertain } from "../src/dead-letters/resolve-uncertain.js";
import { retryDead } from "../src/dead-letters/retry-dead.js";
import { showJob } from "../src/show/show-job.js";

const config = (() => {
  const r = parseConfig({}, { dir: "/nonexistent" });
  if (!r.ok) throw new Error("config");
  return r.config;
})();

const hook = { kind: "http.request", target: "hooks", method: "POST", path: "/x" } as const;

/** Records `jobId` with one effect and ends its run dead with that effect uncertain. */
async function deadWithUncertainEffect(journal: JournalStore, jobId: string): Promise<void> {
  await journal.outputs.record(
    { jobId, agent: "w", effects: [hook] },
    { source: "cli", targets: [] },
  );
  const claim = await journal.runs.claim({ owner: "t", leaseMs: 60_000, maxLeaseExpiries: 5 });
  if (!claim) throw new Error("no claim");
  const key = `${jobId}/0`;
  await journal.ledger.intend(claim.lease, { key, idx: 0, kind: hook.kind, specHash: "h" });
  await journal.ledger.settle(claim.lease, key, "uncertain", { reason: "no answer" });
  await journal.runs.markDead(claim.lease, { class: "uncertain", error: "no answer" });
}

/** Enqueues `jobId` on the embedded queue and dead-letters it. */
async function deadLettered(journal: JournalStore, jobId: string): Promise<void> {
  await journal.jobs.enqueue({ jobId, agent: "w", input: {} });
  await journal.deadLetters.add(jobId, { class: "logic", error: "agent failed", deliveries: 3 });
}

describe("listDeadLetters", () => {
  it("lists dead runs with their open effects, the uncertain ones, and open dead letters", async () => {
    await using t = await tempJournal({ synchronous: "OFF" });
    await deadWithUncertainEffect(t.journal, "hook");
    await deadLettered(t.journal, "never");
    const listing = await listDeadLetters(t.journal);
    expect(listing.runs).toMatchObject([
      {
        jobId: "hook",
        generation: 1,
        class: "uncertain",
        effects: [{ key: "hook/0", state: "uncertain" }],
      },
    ]);
    expect(listing.uncertain).toMatchObject([{ key: "hook/0", jobId: "hook", generation: 1 }]);
    expect(listing.jobs.map((j) => j.jobId)).toEqual(["never"]);
  });
});

describe("retryDead", () => {
  it("makes the next generation of a dead run, pending", async () => {
    await using t = await tempJournal({ synchronous: "OFF" });
    await deadWithUncertainEffect(t.journal, "hook");
    const outcome = await retryDead("hook", { config, journal: t.journal, actor: "alice" });
    expect(outcome.run).toMatchObject({ jobId: "hook", generation: 2, state: "pending" });
  });

  it("queues a dead-lettered job again on the embedded queue and resolves its dead letter", async () => {
    await using t = await tempJournal({ synchronous: "OFF" });
    await deadLettered(t.journal, "never");
    const outcome = await retryDead("never", { config, journal: t.journal, actor: "alice" });
    expect(outcome.job).toMatchObject({ jobId: "never", stream: "embedded", retry: 1 });
    expect((await t.journal.jobs.get("never"))?.state).toBe("queued");
    expect(await t.journal.deadLetters.list({ unresolved: true })).toEqual([]);
  });

  it("refuses a job without output or dead letter (NOT_FOUND) and a run that is not dead (INVALID_STATE)", async () => {
    await using t = await tempJournal({ synchronous: "OFF" });
    await expect(
      retryDead("nobody", { config, journal: t.journal, actor: "a" }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await t.journal.outputs.record(
      { jobId: "live", agent: "w", effects: [] },
      { source: "cli", targets: [] },
    );
    await expect(
      retryDead("live", { config, journal: t.journal, actor: "a" }),
    ).rejects.toMatchObject({
      code: "INVALID_STATE",
    });
  });
});

describe("resolveUncertain", () => {
  it("settles the uncertain effect with the decision and returns the run to pending", async () => {
    await using t = await tempJournal({ synchronous: "OFF" });
    await deadWithUncertainEffect(t.journal, "hook");
    const r = await resolveUncertain(t.journal, "hook", {
      decision: "applied",
      reason: "the vendor confirmed it",
      actor: "alice",
    });
    expect(r.effect).toMatchObject({ key: "hook/0", state: "applied", generation: 1 });
    expect(r.run).toBe("pending");
    expect((await showJob(t.journal, "hook")).effects).toMatchObject([
      { key: "hook/0", state: "applied" },
    ]);
  });
});

describe("showJob", () => {
  it("answers NOT_FOUND for a job without an output", async () => {
    await using t = await tempJournal({ synchronous: "OFF" });
    await expect(showJob(t.journal, "nobody")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
