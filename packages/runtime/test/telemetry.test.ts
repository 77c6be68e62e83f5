import { defaultConfig } from "@idem/schema";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  createTracing,
  noopTracing,
  normalizeTraceparent,
  resolveOtlpTarget,
  startTelemetry,
  traceIdOf,
} from "../src/index.js";
import { startOtlpReceiver } from "./otlp-receiver.js";

const REMOTE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const config = defaultConfig("/tmp");
const withTelemetry = (telemetry: Partial<typeof config.telemetry>) => ({
  telemetry: { ...config.telemetry, ...telemetry },
});

/** A logger whose lines are kept, to check what telemetry says (and never says). */
function capturedLogger() {
  const lines: string[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
  return { logger, lines };
}

const poll = async (done: () => boolean, what: string) => {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!done()) throw new Error(`timed out waiting for ${what}`);
};

describe("traceparent helpers", () => {
  it("keep a valid W3C traceparent in version-00 form and refuse anything else", () => {
    expect(normalizeTraceparent(REMOTE)).toBe(REMOTE);
    expect(normalizeTraceparent(` ${REMOTE} `)).toBe(REMOTE);
    expect(traceIdOf(REMOTE)).toBe("0af7651916cd43dd8448eb211c80319c");
    for (const bad of [
      undefined,
      "",
      "00-00000000000000000000000000000000-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
      "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
      `${REMOTE}-extra`,
      "x".repeat(10_000),
    ]) {
      expect(normalizeTraceparent(bad), String(bad).slice(0, 60)).toBeUndefined();
    }
  });
});

describe("noopTracing (telemetry off)", () => {
  it("records nothing and passes a parent's trace context through, so it still travels with the job", async () => {
    expect(noopTracing.enabled).toBe(false);
    expect(noopTracing.start("idem.delivery").traceparent).toBeUndefined();
    expect(noopTracing.start("idem.delivery", { parent: "garbage" }).traceparent).toBeUndefined();
    const span = noopTracing.start("idem.delivery", { parent: REMOTE });
    expect(span.traceparent).toBe(REMOTE);
    expect(noopTracing.start("idem.record", { parent: span }).traceparent).toBe(REMOTE);
    await expect(
      noopTracing.inSpan("idem.agent.run", {}, async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
  });

  it("is what startTelemetry gives with no telemetry config and no OTEL variables: no provider, no exporter", () => {
    const { logger, lines } = capturedLogger();
    const tracing = startTelemetry({ config, service: "idem-executor", env: {}, logger });
    expect(tracing).toBe(noopTracing);
    expect(lines).toEqual([]);
    // Nothing was registered with the OpenTelemetry API either: its global tracer is the no-op one.
    expect(trace.getTracer("x").startSpan("y").isRecording()).toBe(false);
    expect(resolveOtlpTarget(config, {}).target).toBeUndefined();
  });
});

describe("createTracing", () => {
  it("makes spans that share the trace of their parent span or of a remote traceparent", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing({ exporter, serviceName: "test", processor: "simple" });
    const root = tracing.start("idem.delivery", { parent: REMOTE, kind: "consumer" });
    await tracing.inSpan(
      "idem.record",
      { parent: root, attributes: { "idem.job_id": "j1", skipped: undefined } },
      async (span) => {
        expect(traceIdOf(span.traceparent)).toBe(traceIdOf(REMOTE));
      },
    );
    root.end();
    root.end();
    const [record, delivery] = exporter.getFinishedSpans();
    expect(exporter.getFinishedSpans()).toHaveLength(2);
    expect(delivery?.spanContext().traceId).toBe(traceIdOf(REMOTE));
    expect(delivery?.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    expect(record?.parentSpanContext?.spanId).toBe(delivery?.spanContext().spanId);
    expect(record?.attributes).toEqual({ "idem.job_id": "j1" });
    expect(delivery?.resource.attributes["service.name"]).toBe("test");
  });

  it("marks a span failed with the error's code, rethrows, and keeps two tracings in one process apart", async () => {
    const a = new InMemorySpanExporter();
    const b = new InMemorySpanExporter();
    const one = createTracing({ exporter: a, serviceName: "one", processor: "simple" });
    const two = createTracing({ exporter: b, serviceName: "two", processor: "simple" });
    await expect(
      one.inSpan("idem.agent.run", {}, async () => {
        throw new TypeError("bad");
      }),
    ).rejects.toThrow("bad");
    two.start("idem.claim", { parent: REMOTE }).end();
    expect(
      a.getFinishedSpans().map((s) => [s.name, s.status.code, s.attributes["error.type"]]),
    ).toEqual([["idem.agent.run", 2, "TypeError"]]);
    expect(b.getFinishedSpans().map((s) => s.name)).toEqual(["idem.claim"]);
  });
});

describe("startTelemetry over OTLP/HTTP", () => {
  it("resolves telemetry.otlpUrl (a base or a traces URL) before the OTEL variables, and OTEL_SDK_DISABLED wins", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/base/" };
    expect(resolveOtlpTarget(config, env).target).toEqual({
      url: "http://collector:4318/base/v1/traces",
      from: "OTEL_EXPORTER_OTLP_ENDPOINT",
    });
    expect(
      resolveOtlpTarget(config, {
        ...env,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://other:4318/x",
      }).target?.url,
    ).toBe("http://other:4318/x");
    expect(resolveOtlpTarget(withTelemetry({ otlpUrl: "http://c:4318" }), env).target).toEqual({
      url: "http://c:4318/v1/traces",
      from: "telemetry.otlpUrl",
    });
    expect(
      resolveOtlpTarget(withTelemetry({ otlpUrl: "https://c/otlp/traces" }), {}).target?.url,
    ).toBe("https://c/otlp/traces");
    expect(resolveOtlpTarget(config, { ...env, OTEL_SDK_DISABLED: "true" }).target).toBeUndefined();
    expect(resolveOtlpTarget(config, { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" })).toEqual({
      target: undefined,
      ignored: ["OTEL_EXPORTER_OTLP_ENDPOINT"],
    });
  });

  it("exports spans as OTLP JSON with the configured headers, and logs neither the headers nor the URL's credentials", async () => {
    await using receiver = await startOtlpReceiver();
    const { logger, lines } = capturedLogger();
    const url = receiver.url.replace("http://", "http://otel-user:url-s3cret@");
    const tracing = startTelemetry({
      config: withTelemetry({ otlpUrl: url, headers: { "x-api-key": "header-s3cret" } }),
      service: "idem-test",
      env: {},
      logger,
    });
    expect(tracing.enabled).toBe(true);
    const span = tracing.start("idem.enqueue", { attributes: { "idem.job_id": "j1" } });
    span.end();
    await tracing.shutdown();
    await poll(() => receiver.spans.length > 0, "the exported span");
    expect(receiver.requests[0]).toMatchObject({
      path: "/v1/traces",
      contentType: "application/json",
    });
    expect(receiver.requests[0]?.headers["x-api-key"]).toBe("header-s3cret");
    expect(receiver.spans[0]).toMatchObject({
      name: "idem.enqueue",
      service: "idem-test",
      traceId: traceIdOf(span.traceparent),
      attributes: { "idem.job_id": "j1" },
    });
    const log = lines.join("");
    expect(log).toContain("traces exported over OTLP/HTTP");
    expect(log).not.toContain("s3cret");
  });

  it("leaves the caller unharmed when the receiver is down: the span ends, shutdown is bounded, the failure is logged without secrets", async () => {
    const receiver = await startOtlpReceiver();
    await receiver.close(); // nothing listens on this port now
    const { logger, lines } = capturedLogger();
    const tracing = startTelemetry({
      config: withTelemetry({ headers: { authorization: "Bearer header-s3cret" } }),
      service: "idem-test",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url.replace("//", "//u:url-s3cret@") },
      logger,
      shutdownTimeoutMs: 20_000,
    });
    const result = await tracing.inSpan("idem.record", {}, async () => "recorded");
    expect(result).toBe("recorded");
    await tracing.flush();
    await tracing.shutdown();
    await poll(
      () => lines.some((l) => l.includes("could not be exported")),
      "the export failure log",
    );
    expect(lines.join("")).not.toContain("s3cret");
  });
});
