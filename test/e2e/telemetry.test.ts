// OpenTelemetry traces across processes, with real parts: one job enqueued, delivered by a real
// executor (the embedded queue, or a real nats-server), recorded, then interpreted by an
// interpreter with its own journal connection and its own tracer provider (a second process, or
// the same one after a restart), then replayed by a third: one trace from the enqueue to the last
// effect, the replay's spans in it too.
import { buildReplayPlan, createReplayRuns, enqueueJob, openEffects } from "@idem/core";
import { createExecutor } from "@idem/executor";
import { createInterpreter } from "@idem/interpreter";
import type { JournalStore } from "@idem/journal";
import { closeNats, connectNats, submitSubject, withJobPublisher } from "@idem/nats";
import { createTracing, silentLogger, type Tracing } from "@idem/runtime";
import type { Config, Job } from "@idem/schema";
import { startNatsServer, tempDir } from "@idem/testing";
import { headers } from "@nats-io/transport-node";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import {
  createWorkspace,
  mixedOutput,
  openWorkspaceJournal,
} from "../chaos/interpreter-fixture.js";

/** One simulated process: its own journal connection, tracer provider and in-memory exporter. */
async function process_(config: Config, name: string) {
  const exporter = new InMemorySpanExporter();
  const tracing = createTracing({ exporter, serviceName: name, processor: "simple" });
  const journal = await openWorkspaceJournal({ config } as Parameters<
    typeof openWorkspaceJournal
  >[0]);
  // The exporter forgets its spans when the provider shuts down: kept here for the checks.
  let kept: ReadableSpan[] | undefined;
  return {
    tracing,
    journal,
    spans: () => kept ?? exporter.getFinishedSpans(),
    async close() {
      await tracing.flush();
      kept = [...exporter.getFinishedSpans()];
      await tracing.shutdown();
      await journal.close();
    },
  };
}

async function waitFor(what: string, done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Runs an executor with an in-process agent until the job's output is recorded, then stops it. */
async function executeOnce(config: Config, journal: JournalStore, tracing: Tracing, job: Job) {
  const executor = createExecutor({
    config,
    journal,
    tracing,
    agents: ["writer"],
    run: async (j) => mixedOutput(j.jobId),
    logger: silentLogger(),
    pollMs: 20,
  });
  await executor.start();
  try {
    await waitFor(`the output of ${job.jobId}`, () => journal.outputs.has(job.jobId));
  } finally {
    await executor.stop();
  }
}

async function interpretAll(config: Config, journal: JournalStore, tracing: Tracing) {
  const effects = openEffects(config);
  try {
    const interpreter = createInterpreter({
      config,
      journal,
      effects,
      tracing,
      logger: silentLogger(),
    });
    const result = await interpreter.drain();
    expect(result.runs.done).toBe(1);
  } finally {
    await effects.close();
  }
}

const named = (spans: readonly ReadableSpan[], name: string) =>
  spans.filter((s) => s.name === name);
const one = (spans: readonly ReadableSpan[], name: string): ReadableSpan => {
  const found = named(spans, name);
  expect(
    found.map((s) => s.name),
    name,
  ).toEqual([name]);
  return found[0] as ReadableSpan;
};
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;

describe("OpenTelemetry traces of one job", () => {
  it.each(["embedded", "jetstream"] as const)(
    "on the %s queue: one trace from the enqueue to the last effect's apply, across processes, and a replay joins it",
    async (queue) => {
      await using dir = await tempDir("idem-trace-");
      await using nats = queue === "jetstream" ? await startNatsServer() : undefined;
      const ws = await createWorkspace(dir.path, {}, nats ? { nats: { url: nats.url } } : {});
      const config = ws.config;
      const job: Job = { jobId: `trace-${queue}`, agent: "writer", input: { topic: "otel" } };

      // Process 1: idem enqueue, then the executor (on JetStream the trace crosses the stream).
      const p1 = await process_(config, "idem-executor");
      try {
        const outcome = await withJobPublisher(config, "trace-test", (publisher) =>
          enqueueJob(job, { journal: p1.journal, publisher, tracing: p1.tracing }),
        );
        expect(outcome.stream).toBe(queue === "jetstream" ? "IDEM_JOBS" : "embedded");
        await executeOnce(config, p1.journal, p1.tracing, job);
      } finally {
        await p1.close();
      }
      const s1 = p1.spans();
      const enqueue = one(s1, "idem.enqueue");
      const delivery = one(s1, "idem.delivery");
      const run = one(s1, "idem.agent.run");
      const record = one(s1, "idem.record");
      const traceId = enqueue.spanContext().traceId;
      expect(parentOf(enqueue)).toBeUndefined();
      expect(parentOf(delivery)).toBe(idOf(enqueue));
      expect(delivery.parentSpanContext?.isRemote).toBe(true); // from the NATS header or the job row
      expect(parentOf(run)).toBe(idOf(delivery));
      expect(parentOf(record)).toBe(idOf(delivery));
      expect(delivery.attributes).toMatchObject({
        "idem.job_id": job.jobId,
        "idem.transport": queue,
        "idem.delivery.outcome": "recorded",
      });
      expect(record.attributes).toMatchObject({ "idem.record.status": "recorded" });

      // Process 2: an interpreter with its own provider continues the trace kept with the record.
      const p2 = await process_(config, "idem-interpreter");
      try {
        const rec = await p2.journal.outputs.get(job.jobId);
        expect(rec?.traceparent).toBe(`00-${traceId}-${idOf(record)}-01`);
        await interpretAll(config, p2.journal, p2.tracing);
      } finally {
        await p2.close();
      }
      const s2 = p2.spans();
      const claim = one(s2, "idem.claim");
      expect(parentOf(claim)).toBe(idOf(record));
      expect(claim.attributes).toMatchObject({
        "idem.job_id": job.jobId,
        "idem.generation": 1,
        "idem.run.outcome": "done",
      });
      const effects = mixedOutput(job.jobId).effects;
      const keys = effects.map((_, i) => `${job.jobId}/${i}`);
      for (const name of ["idem.probe", "idem.apply"]) {
        const spans = named(s2, name);
        expect(
          spans.map((s) => s.attributes["idem.effect_key"]),
          name,
        ).toEqual(keys);
        for (const s of spans) {
          expect(parentOf(s)).toBe(idOf(claim));
          expect(s.attributes).toMatchObject({
            "idem.job_id": job.jobId,
            "idem.effect.outcome": name === "idem.probe" ? "absent" : "applied",
          });
        }
      }
      expect(named(s2, "idem.apply").map((s) => s.attributes["idem.effect.kind"])).toEqual(
        effects.map((e) => e.kind),
      );

      // Process 3: idem replay --now. The new generation finds every effect present, in the same trace.
      const p3 = await process_(config, "idem-replay");
      try {
        const effectsFacade = openEffects(config);
        try {
          const plan = await buildReplayPlan({
            journal: p3.journal,
            effects: effectsFacade,
            selection: { jobIds: [job.jobId] },
            forceUnprobeable: false,
          });
          const created = await createReplayRuns(p3.journal, plan, {
            actor: "tester",
            tracing: p3.tracing,
          });
          expect(created.map((r) => r.generation)).toEqual([2]);
        } finally {
          await effectsFacade.close();
        }
        await interpretAll(config, p3.journal, p3.tracing);
      } finally {
        await p3.close();
      }
      const s3 = p3.spans();
      const replay = one(s3, "idem.replay");
      const again = one(s3, "idem.claim");
      expect(parentOf(replay)).toBe(idOf(record));
      expect(parentOf(again)).toBe(idOf(record));
      expect(again.attributes).toMatchObject({ "idem.generation": 2 });
      expect(named(s3, "idem.probe").map((s) => s.attributes["idem.effect.outcome"])).toEqual(
        keys.map(() => "present"),
      );
      expect(named(s3, "idem.apply")).toEqual([]);

      // One trace: every span of the three processes, from the enqueue to the replay's last probe.
      const all = [...s1, ...s2, ...s3];
      expect(new Set(all.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));
      const startOf = (s: ReadableSpan) => s.startTime[0] * 1e9 + s.startTime[1];
      expect(Math.min(...all.map(startOf))).toBe(startOf(enqueue));
    },
    120_000,
  );

  it("continues the traceparent header of a NATS submit: the record keeps its idem.submit span's context", async () => {
    const remote = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    await using dir = await tempDir("idem-trace-submit-");
    await using nats = await startNatsServer();
    const ws = await createWorkspace(dir.path, {}, { nats: { url: nats.url } });
    const p = await process_(ws.config, "idem-executor");
    const executor = createExecutor({
      config: ws.config,
      journal: p.journal,
      tracing: p.tracing,
      agents: ["writer"],
      run: async (j) => mixedOutput(j.jobId),
      logger: silentLogger(),
    });
    await executor.start();
    const nc = await connectNats(nats.url, "submitter");
    let stored: string | undefined;
    try {
      const h = headers();
      h.set("traceparent", remote);
      const body = JSON.stringify(mixedOutput("submitted-1"));
      const subject = submitSubject(ws.config.nats?.subjectPrefix ?? "idem");
      const reply = await nc.request(subject, body, { headers: h, timeout: 10_000 });
      expect(reply.json()).toEqual({ status: "recorded", jobId: "submitted-1" });
      stored = (await p.journal.outputs.get("submitted-1"))?.traceparent;
    } finally {
      await closeNats(nc);
      await executor.stop();
      await p.close();
    }
    const submit = one(p.spans(), "idem.submit");
    expect(submit.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(parentOf(submit)).toBe("00f067aa0ba902b7");
    expect(submit.attributes).toMatchObject({ "idem.submit.source": "nats" });
    expect(stored).toBe(`00-4bf92f3577b34da6a3ce929d0e0e4736-${idOf(submit)}-01`);
  }, 60_000);
});
