export type { NatsServerHandle, StartNatsServerOptions } from "./nats-server.js";
export { freePort, startNatsServer } from "./nats-server.js";
export type { CheckedRequest, OpenApiChecker } from "./openapi-check.js";
export { createOpenApiChecker } from "./openapi-check.js";
export type { TempDir } from "./temp-dir.js";
export { tempDir } from "./temp-dir.js";
export type { TempJournal } from "./temp-journal.js";
export { tempJournal } from "./temp-journal.js";
