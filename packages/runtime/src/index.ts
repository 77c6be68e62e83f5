// @idem/runtime: what every idem process shares below the domain. pino, hono and OpenTelemetry are
// loaded when first used (a logger made, a server started, telemetry on), never by this import.
export type { CrossOriginHeaders } from "./browser-guards.js";
export {
  assertListenAllowed,
  crossOriginRefusal,
  hostRefusal,
  isLoopbackHost,
} from "./browser-guards.js";
export type { FileLockOptions, HolderState } from "./file-lock.js";
export { describeHolder, FileLock, processState } from "./file-lock.js";
export type { HttpServer } from "./http-server.js";
export { metricsHandler, serveHttp, startMetricsServer } from "./http-server.js";
export type { CreateLoggerOptions, LogFormat, Logger } from "./logger.js";
export {
  createLogger,
  defaultLogFormat,
  isLogFormat,
  LOG_FORMATS,
  silentLogger,
} from "./logger.js";
export type { OwnerIdentity } from "./owner-id.js";
export {
  createOwnerId,
  formatOwnerId,
  ownerIsDead,
  parseOwnerId,
  processStartTime,
} from "./owner-id.js";
export type { HeldFileLock, ProcessInfo, ProcessState } from "./process-state.js";
export { describeProcess, fileLocksOn } from "./process-state.js";
export type { OtlpTarget, StartTelemetryOptions, TelemetryEnv } from "./start-telemetry.js";
export { resolveOtlpTarget, startTelemetry } from "./start-telemetry.js";
export { onStopSignal } from "./stop-signal.js";
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
