// Process plumbing shared by the apps (retry/backoff, logger setup, metrics server, owner IDs).

// The retry helper and sleep are defined once in @idem/schema (so @idem/nats can use them too).
export type { Backoff, BackoffPolicy, RetryPolicy } from "@idem/schema";
export { createBackoff, retry, retryAfter, scheduledDelay, sleep } from "@idem/schema";
export { assertConfigInvariants } from "./config-invariants.js";
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
export { isNotReadyYet } from "./not-ready.js";
export { createOwnerId } from "./owner-id.js";
