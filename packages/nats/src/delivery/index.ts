// The JetStream side of job delivery for the executor (consume, ack, nak, heartbeat, submit
// responder, the jobs of agents no executor consumes).
// The connection type, for callers that pass one in (`createExecutor({ nc })`) without @nats-io.
export type { NatsConnection } from "@nats-io/transport-node";
export { JetStreamJobMessage } from "./jetstream-job-message.js";
export type {
  ConsumeJobsHandlers,
  JetStreamJobs,
  OpenJetStreamJobsOptions,
} from "./jetstream-jobs.js";
export { openJetStreamJobs } from "./jetstream-jobs.js";
export type { SubmitRequest, SubmitResponder } from "./submit-responder.js";
export { SUBMIT_QUEUE_GROUP, startSubmitResponder } from "./submit-responder.js";
export type {
  SweepUnconsumedOptions,
  UnconsumedJobMessage,
  UnconsumedJobs,
} from "./unconsumed-jobs.js";
export { openUnconsumedJobs } from "./unconsumed-jobs.js";
