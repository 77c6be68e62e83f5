// The executor's decision (record before ack), in the core beside interpretRun: a delivery's output
// is recorded before it is acked; a redelivery of a recorded job is acked without running the
// agent; a failed run is given back, and dead-lettered at queue.maxDeliver. Over a real SQLite
// journal; the deliveries claim through the journal as the JetStream transport's do.
import { createLogger, noopTracing } from "@idem/runtime";
import { type Config, type Job, ManualClock, noFault, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createDeliveryHandler, type Delivery, type DeliveryHandlerOptions } from "../src/index.js";

const config = ((): Config => {
  const r = parseConfig(
    { agents: { writer: { command: ["true"] } }, queue: { maxDeliver: 2, backoffMs: [1] } },
    { dir: "/tmp" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
})();
const counter = () => ({
  n: 0,
  inc() {
    this.n++;
  },
});
const metrics = () => ({
  deliveries: counter(),
  skippedRedeliveries: counter(),
  naks: counter(),
  recordRetries: counter(),
  invalid: counter(),
  records: counter(),
  conflicts: counter(),
  agentRunSeconds: { observe() {} },
});

/** A delivery whose settle is noted: "ack", "later", "giveUp". */
function delivery(j: DeliveryHandlerOptions["journal"], job: Job, deliveries: number) {
  const settled: string[] = [];
  const d: Delivery = {
    job,
    deliveries,
    claim: () => j.jobs.claim(job, { owner: "t", leaseMs: 60_000 }),
    heartbeat: async () => {},
    ack: async () => void settled.push("ack"),
    later: async () => void settled.push("later"),
    giveUp: async () => void settled.push("giveUp"),
  };
  return { d, settled };
}

describe("createDeliveryHandler (the executor's decision)", () => {
  it("records the agent's output before the ack, and acks a redelivery without running the agent again", async () => {
    await using t = await tempJournal();
    const job: Job = { jobId: "j1", agent: "writer", input: {} };
    const runs: string[] = [];
    const handler = createDeliveryHandler(
      options(t.journal, async (jb) => {
        runs.push(jb.jobId);
        // Not recorded yet while the agent runs: the ack comes after the record.
        expect(await t.journal.outputs.get(jb.jobId)).toBeUndefined();
        return { effects: [] };
      }),
    );
    const first = delivery(t.journal, job, 1);
    await handler.handle(first.d, 1_000);
    expect(first.settled).toEqual(["ack"]);
    expect((await t.journal.outputs.get("j1"))?.output.agent).toBe("writer");
    const again = delivery(t.journal, job, 2);
    await handler.handle(again.d, 1_000);
    expect(again.settled).toEqual(["ack"]);
    expect(runs).toEqual(["j1"]);
  });

  it("gives a failed run back, then dead-letters it at queue.maxDeliver, recording nothing", async () => {
    await using t = await tempJournal();
    const job: Job = { jobId: "j2", agent: "writer", input: {} };
    const dead: string[] = [];
    const handler = createDeliveryHandler({
      ...options(t.journal, async () => ({ effects: [{ kind: "no.such-kind" }] })),
      onDeadLetter: async (id) => void dead.push(id),
    });
    const first = delivery(t.journal, job, 1);
    await handler.handle(first.d, 1_000);
    expect(first.settled).toEqual(["later"]);
    const last = delivery(t.journal, job, 2);
    await handler.handle(last.d, 1_000);
    expect(last.settled).toEqual(["giveUp"]);
    expect(dead).toEqual(["j2"]);
    expect(await t.journal.outputs.get("j2")).toBeUndefined();
  });
});

function options(
  journal: DeliveryHandlerOptions["journal"],
  run: (job: Job) => Promise<unknown>,
): DeliveryHandlerOptions {
  return {
    config,
    journal,
    runAgent: (job) => run(job),
    log: createLogger({ name: "test", level: "silent" }),
    metrics: metrics(),
    fault: noFault,
    clock: new ManualClock(),
    owner: "t",
    transport: "jetstream",
    journalFailed: () => false,
    fatalSignal: new AbortController().signal,
    onDeadLetter: async () => {},
    tracing: noopTracing,
  };
}
