// Process plumbing shared by the apps (retry/backoff, logger setup, metrics server, owner IDs).
export { assertConfigInvariants } from "./config-invariants.js";
export type { HttpServer } from "./http-server.js";
export { metricsHandler, serveHttp, startMetricsServer } from "./http-server.js";
export type { CreateLoggerOptions, Logger } from "./logger.js";
export { createLogger, silentLogger } from "./logger.js";
export { createOwnerId } from "./owner-id.js";
export type { Backoff, BackoffPolicy, RetryPolicy } from "./retry.js";
export { createBackoff, retry, retryAfter, scheduledDelay } from "./retry.js";
export { sleep } from "./sleep.js";
