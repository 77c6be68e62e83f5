import { describeError, isIdemError } from "@idem/schema";
import type { Context, Span, SpanKind, Tracer } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import { otelApi, otelResources, otelTraceBase } from "./opentelemetry.js";
import { formatTraceparent, normalizeTraceparent, parseTraceparent } from "./traceparent.js";

/** An attribute value a span takes; `undefined` values are left out. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** The role of a span in its trace (OpenTelemetry's span kinds). */
export type SpanKindName = "internal" | "producer" | "consumer" | "server" | "client";

/**
 * One span of idem's tracing facade. With tracing off it records nothing, and its `traceparent`
 * is its parent's, passed through: a trace context that arrived with a job still travels with it
 * (to the stream, the journal, the interpreter) in a process that exports nothing.
 */
export interface TraceSpan {
  /** This span's W3C traceparent (or the parent's when tracing is off); undefined when none. */
  readonly traceparent: string | undefined;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed with the error's code and description (no stack, no payload). */
  fail(error: unknown): void;
  /** Ends the span; a second call does nothing. */
  end(): void;
}

/**
 * What a span continues: a span of this process, a W3C traceparent that came from elsewhere (a
 * NATS header, an HTTP header, the journal), or nothing (a new trace). An invalid traceparent
 * counts as nothing.
 */
export type SpanParent = TraceSpan | string | null | undefined;

/** How a span starts. */
export interface StartSpanOptions {
  parent?: SpanParent;
  attributes?: SpanAttributes;
  kind?: SpanKindName;
  /** When the span began, in epoch milliseconds, for a span started after the fact. Default now. */
  startTime?: number;
}

/**
 * idem's tracing facade: the one way apps and core make spans. Every span names its parent
 * explicitly (no ambient context), so two tracings in one process (two simulated processes in a
 * test) never mix. Never throws for a span: tracing is never a reason for a job to fail.
 */
export interface Tracing {
  /** False for {@link noopTracing}: spans record nothing and cost next to nothing. */
  readonly enabled: boolean;
  start(name: string, options?: StartSpanOptions): TraceSpan;
  /**
   * Runs `fn` in a new span and ends it when `fn` settles; a throw marks the span failed and is
   * rethrown as it is.
   */
  inSpan<T>(
    name: string,
    options: StartSpanOptions,
    fn: (span: TraceSpan) => Promise<T>,
  ): Promise<T>;
  /** Exports the spans ended so far; bounded, never rejects. */
  flush(): Promise<void>;
  /** Exports what is left and stops; bounded (an unreachable receiver cannot hold a stop), never rejects. */
  shutdown(): Promise<void>;
}

const parentTraceparent = (parent: SpanParent): string | undefined =>
  typeof parent === "string" || parent == null ? normalizeTraceparent(parent) : parent.traceparent;

/** A span that records nothing and passes its parent's trace context through. */
class PassThroughSpan implements TraceSpan {
  constructor(readonly traceparent: string | undefined) {}
  setAttributes(): void {}
  fail(): void {}
  end(): void {}
}

const NO_TRACE = new PassThroughSpan(undefined);

async function inSpanOf<T>(
  tracing: Tracing,
  name: string,
  options: StartSpanOptions,
  fn: (span: TraceSpan) => Promise<T>,
): Promise<T> {
  const span = tracing.start(name, options);
  try {
    return await fn(span);
  } catch (e) {
    span.fail(e);
    throw e;
  } finally {
    span.end();
  }
}

/** Tracing off: no provider, no exporter, no network; spans pass their parent's context through. */
export const noopTracing: Tracing = {
  enabled: false,
  start(_name, options = {}) {
    const traceparent = parentTraceparent(options.parent);
    return traceparent === undefined ? NO_TRACE : new PassThroughSpan(traceparent);
  },
  inSpan(name, options, fn) {
    return inSpanOf(noopTracing, name, options, fn);
  },
  async flush() {},
  async shutdown() {},
};

/** OpenTelemetry's span kind of each name (read when a tracing is created: the API is loaded then). */
function spanKinds(): Record<SpanKindName, SpanKind> {
  const { SpanKind } = otelApi();
  return {
    internal: SpanKind.INTERNAL,
    producer: SpanKind.PRODUCER,
    consumer: SpanKind.CONSUMER,
    server: SpanKind.SERVER,
    client: SpanKind.CLIENT,
  };
}

const defined = (attributes: SpanAttributes | undefined) => {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(attributes ?? {})) if (v !== undefined) out[k] = v;
  return out;
};

/** A recording span of an OpenTelemetry tracer. */
class OtelSpan implements TraceSpan {
  #ended = false;
  constructor(readonly span: Span) {}
  get traceparent(): string {
    return formatTraceparent(this.span.spanContext());
  }
  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(defined(attributes));
  }
  fail(error: unknown): void {
    const type = isIdemError(error)
      ? error.code
      : error instanceof Error
        ? error.name
        : typeof error;
    this.span.setAttribute("error.type", type);
    this.span.setStatus({ code: otelApi().SpanStatusCode.ERROR, message: describeError(error) });
  }
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.span.end();
  }
}

/** The parent context of a new span: a span of this tracer, a remote traceparent, or a new trace. */
function parentContext(parent: SpanParent): Context {
  const { ROOT_CONTEXT, trace } = otelApi();
  if (parent instanceof OtelSpan) return trace.setSpan(ROOT_CONTEXT, parent.span);
  const remote = parseTraceparent(parentTraceparent(parent));
  return remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : ROOT_CONTEXT;
}

/** How {@link createTracing} builds a tracer. */
export interface CreateTracingOptions {
  /** Where ended spans go: the OTLP exporter, or an in-memory exporter in tests. */
  exporter: SpanExporter;
  /** The `service.name` resource attribute. */
  serviceName: string;
  /**
   * Export in batches off the job's path (default; what a process uses) or each span as it ends
   * (`"simple"`, for tests that read an in-memory exporter).
   */
  processor?: "batch" | "simple";
  /** The most `flush()` and `shutdown()` wait for the exporter; default 5 s. */
  shutdownTimeoutMs?: number;
}

/**
 * A tracing with its own tracer provider (never registered globally: no other code's spans go
 * through it, and a second tracing in the same process stays apart). Spans are exported by
 * `options.exporter`; an export that fails is the exporter's to report and never reaches a span's
 * caller.
 */
export function createTracing(options: CreateTracingOptions): Tracing {
  const { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } = otelTraceBase();
  const { defaultResource, resourceFromAttributes } = otelResources();
  const kinds = spanKinds();
  const processor =
    options.processor === "simple"
      ? new SimpleSpanProcessor(options.exporter)
      : new BatchSpanProcessor(options.exporter, { exportTimeoutMillis: 5_000 });
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ "service.name": options.serviceName }),
    ),
    spanProcessors: [processor],
  });
  const tracer: Tracer = provider.getTracer("idem");
  const timeoutMs = options.shutdownTimeoutMs ?? 5_000;
  const bounded = (work: () => Promise<void>) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      work().then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        () => {
          clearTimeout(timer);
          resolve();
        },
      );
    });
  let stopped: Promise<void> | undefined;
  const tracing: Tracing = {
    enabled: true,
    start(name, startOptions = {}) {
      const span = tracer.startSpan(
        name,
        {
          kind: kinds[startOptions.kind ?? "internal"],
          attributes: defined(startOptions.attributes),
          ...(startOptions.startTime === undefined ? {} : { startTime: startOptions.startTime }),
        },
        parentContext(startOptions.parent),
      );
      return new OtelSpan(span);
    },
    inSpan(name, startOptions, fn) {
      return inSpanOf(tracing, name, startOptions, fn);
    },
    flush: () => bounded(() => provider.forceFlush()),
    shutdown() {
      stopped ??= bounded(() => provider.shutdown());
      return stopped;
    },
  };
  return tracing;
}
