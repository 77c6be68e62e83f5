// OpenTelemetry traces, off by default: the tracing facade the apps use, the process setup (OTLP/HTTP
// export) and the W3C traceparent helpers. The only part of idem that imports @opentelemetry/*.
export type {
  OtlpTarget,
  StartTelemetryOptions,
  TelemetryEnv,
} from "./start-telemetry.js";
export { redactUrl, resolveOtlpTarget, startTelemetry } from "./start-telemetry.js";
export { normalizeTraceparent, TRACEPARENT_HEADER, traceIdOf } from "./traceparent.js";
export type {
  CreateTracingOptions,
  SpanAttributes,
  SpanKindName,
  SpanParent,
  StartSpanOptions,
  TraceSpan,
  Tracing,
} from "./tracing.js";
export { createTracing, noopTracing } from "./tracing.js";
