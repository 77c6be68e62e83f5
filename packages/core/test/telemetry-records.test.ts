// The trace context kept with what idem records: a submitted output (HTTP or NATS traceparent) and
// an enqueued job. It travels whether this process traces or not, and it is never part of what
// tells a duplicate from a conflict.

import { createTracing, traceIdOf } from "@idem/runtime";
import type { AgentOutput } from "@idem/schema";
import { parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { enqueueJob, submitOutput } from "../src/index.js";

const config = (() => {
  const r = parseConfig({ roots: { outbox: { path: "outbox" } } }, { dir: "/nonexistent" });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
})();

const FIRST = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const SECOND = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

const output = (jobId: string, content = "x"): AgentOutput =>
  ({
    jobId,
    agent: "writer",
    effects: [{ kind: "file.write", root: "outbox", path: "a.txt", content }],
  }) as AgentOutput;

describe("submitOutput with a traceparent", () => {
  it("answers a retried submit under another traceparent as a duplicate and keeps the first", async () => {
    await using t = await tempJournal();
    const first = await submitOutput({
      journal: t.journal,
      config,
      raw: output("s-1"),
      source: "http",
      trace: {
        traceparent: FIRST,
      },
    });
    const retried = await submitOutput({
      journal: t.journal,
      config,
      raw: output("s-1"),
      source: "http",
      trace: {
        traceparent: SECOND,
      },
    });
    expect(first).toEqual({ status: "recorded", jobId: "s-1" });
    expect(retried).toEqual({ status: "duplicate", jobId: "s-1" });
    expect((await t.journal.outputs.get("s-1"))?.traceparent).toBe(FIRST);
  });

  it("ignores a traceparent that is not W3C: the output is recorded without one", async () => {
    await using t = await tempJournal();
    const r = await submitOutput({
      journal: t.journal,
      config,
      raw: output("s-2"),
      source: "nats",
      trace: {
        traceparent: "00-not-a-trace-01",
      },
    });
    expect(r.status).toBe("recorded");
    expect((await t.journal.outputs.get("s-2"))?.traceparent).toBeUndefined();
  });

  it("traced, records under its idem.submit span, a child of the caller's traceparent", async () => {
    await using t = await tempJournal();
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing({ exporter, serviceName: "test", processor: "simple" });
    await submitOutput({
      journal: t.journal,
      config,
      raw: output("s-3"),
      source: "http",
      trace: {
        traceparent: FIRST,
        tracing,
      },
    });
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe("idem.submit");
    expect(span?.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    expect(span?.attributes).toMatchObject({
      "idem.job_id": "s-3",
      "idem.submit.status": "recorded",
      "idem.submit.source": "http",
    });
    const stored = (await t.journal.outputs.get("s-3"))?.traceparent;
    expect(traceIdOf(stored)).toBe(traceIdOf(FIRST));
    expect(stored).toBe(`00-${traceIdOf(FIRST)}-${span?.spanContext().spanId}-01`);
  });
});

describe("enqueueJob with tracing", () => {
  it("keeps the enqueue span's context with the job row; the same job enqueued again keeps it", async () => {
    await using t = await tempJournal();
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing({ exporter, serviceName: "test", processor: "simple" });
    const job = { jobId: "e-1", agent: "writer", input: { n: 1 } };
    await enqueueJob(job, { journal: t.journal, tracing, traceparent: FIRST });
    const again = await enqueueJob(job, { journal: t.journal, tracing });
    expect(again.duplicate).toBe(true);
    const [first, second] = exporter.getFinishedSpans();
    expect(first?.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    expect(first?.attributes).toMatchObject({
      "idem.job_id": "e-1",
      "idem.enqueue.stream": "embedded",
      "idem.enqueue.duplicate": false,
    });
    expect(second?.attributes).toMatchObject({ "idem.enqueue.duplicate": true });
    expect((await t.journal.jobs.get("e-1"))?.traceparent).toBe(
      `00-${traceIdOf(FIRST)}-${first?.spanContext().spanId}-01`,
    );
  });

  it("untraced, keeps the caller's traceparent with the job (or none)", async () => {
    await using t = await tempJournal();
    await enqueueJob(
      { jobId: "e-2", agent: "writer", input: {} },
      { journal: t.journal, traceparent: SECOND },
    );
    await enqueueJob({ jobId: "e-3", agent: "writer", input: {} }, { journal: t.journal });
    expect((await t.journal.jobs.get("e-2"))?.traceparent).toBe(SECOND);
    expect((await t.journal.jobs.get("e-3"))?.traceparent).toBeUndefined();
  });
});
