import type { ManualClock } from "@idem/schema";
import type { Lease, SqliteJournalStore } from "../src/index.js";
import { CLAIM, output } from "./helpers.js";

/** What `fillJournal` wrote, for the reads the tests compare on both stores. */
export interface FilledJournal {
  jobIds: string[];
  effectKeys: string[];
  /** A run left running under a lease that ends at `leaseUntil` (by the journal's clock). */
  leaseUntil: number;
}

const TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/**
 * A journal with every kind of row, made by real operations of the SQLite store: outputs (one
 * with a trace context), a duplicate and a conflict (a rejection), runs done, failed, dead and
 * replayed (generation 2), a run left running (its lease), effects applied, failed and uncertain,
 * jobs enqueued (inputs), delivered, failed, dead-lettered and retried, events, active targets.
 */
export async function fillJournal(
  j: SqliteJournalStore,
  clock: ManualClock,
  outputs = 12,
): Promise<FilledJournal> {
  const jobIds: string[] = [];
  const effectKeys: string[] = [];
  for (let i = 0; i < outputs; i++) {
    const jobId = `job-${i}`;
    jobIds.push(jobId);
    await j.outputs.record(output(jobId, `content ${i} "quoted" é ✓`), {
      source: i % 2 ? "cli" : "executor",
      targets: [`git:site:${i % 3}`],
      ...(i === 0 ? { traceparent: TRACE } : {}),
    });
    clock.advance(7);
  }
  await j.outputs.record(output("job-0", `content 0 "quoted" é ✓`), { source: "cli", targets: [] });
  await j.outputs.record(output("job-1", "another content"), { source: "cli", targets: [] });

  const claim = async () => {
    const c = await j.runs.claim(CLAIM);
    if (c === undefined) throw new Error("nothing to claim");
    return c;
  };
  const intend = async (lease: Lease, n: number) => {
    const key = `git:site:${lease.jobId}:${n}`;
    effectKeys.push(key);
    await j.ledger.intend(lease, {
      key,
      idx: n,
      kind: "git.commit",
      specHash: `spec-${n}`,
      detail: { n },
    });
    return key;
  };
  // done, with an applied effect
  const done = await claim();
  const k1 = await intend(done.lease, 0);
  await j.ledger.settle(done.lease, k1, "applied", { sha: "abc" });
  await j.runs.complete(done.lease);
  // failed, waiting for a retry
  const failed = await claim();
  const k2 = await intend(failed.lease, 0);
  await j.ledger.settle(failed.lease, k2, "failed", { error: "boom" });
  await j.runs.fail(failed.lease, {
    class: "transient",
    error: "boom",
    nextAt: clock.now() + 60_000,
  });
  // dead, with an uncertain effect
  const dead = await claim();
  const k3 = await intend(dead.lease, 0);
  await j.ledger.settle(dead.lease, k3, "uncertain");
  await j.runs.markDead(dead.lease, { class: "uncertain", error: "timed out" });
  // the done one replayed: generation 2
  await j.runs.replay({ jobIds: [done.run.jobId] }, { actor: "tester" });
  // one left running under its lease
  const running = await claim();
  await intend(running.lease, 0);

  // the queue: enqueued, delivered and failed, dead-lettered, retried
  for (let i = 0; i < 5; i++) {
    await j.jobs.enqueue(
      { jobId: `queued-${i}`, agent: "writer", input: { n: i, text: 'ü\n"x"' } },
      i === 0 ? { traceparent: TRACE } : {},
    );
  }
  const d1 = await j.jobs.claimNext({ owner: "exec", leaseMs: 1000, maxDeliver: 5 });
  if (d1 === undefined) throw new Error("no job to deliver");
  await j.jobs.fail(d1.lease, { class: "transient", error: "agent crashed", nextAt: clock.now() });
  await j.deadLetters.add("queued-4", {
    class: "logic",
    error: "bad input",
    deliveries: 3,
    agent: "writer",
  });
  await j.deadLetters.add("queued-3", { class: "logic", error: "bad input", deliveries: 3 });
  await j.deadLetters.resolve("queued-3", { action: "retry", actor: "tester", reason: "fixed" });
  await j.events.append({ jobId: null, type: "note", actor: "tester", data: { x: [1, 2] } });
  return { jobIds, effectKeys, leaseUntil: running.lease.until };
}
