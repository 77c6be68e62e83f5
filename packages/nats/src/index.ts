export { closeNats, connectNats, natsConnectOptions } from "./connect.js";
export type { DeadLetterAdvisory, StartDeadLetterMonitorOptions } from "./dead-letter-monitor.js";
export { DEAD_LETTER_CONSUMER, startDeadLetterMonitor } from "./dead-letter-monitor.js";
export type {
  ConsumeJobsHandlers,
  JetStreamJobs,
  NatsConnection,
  OpenJetStreamJobsOptions,
  SubmitRequest,
  SubmitResponder,
  SweepUnconsumedOptions,
  UnconsumedJobMessage,
  UnconsumedJobs,
} from "./delivery/index.js";
export {
  JetStreamJobMessage,
  openJetStreamJobs,
  openUnconsumedJobs,
  SUBMIT_QUEUE_GROUP,
  startSubmitResponder,
} from "./delivery/index.js";
export type {
  ExpectedConsumer,
  ExpectedField,
  ExpectedPublishStream,
  ExpectedStream,
  FieldDifference,
  PublishStreamTarget,
} from "./expected-config.js";
export {
  differences,
  effectiveAckWaitMs,
  expectedAgentConsumer,
  expectedDeadLetterStream,
  expectedJobsStream,
  expectedPublishStream,
  patternCovers,
  streamCaptures,
} from "./expected-config.js";
export type {
  ConsumerCounts,
  JetStreamInspector,
  OpenJetStreamInspectorOptions,
  PublishStreamState,
  ServerConfig,
} from "./jetstream-inspector.js";
export {
  inspectAgentConsumer,
  inspectJobsStream,
  inspectPublishStream,
  openJetStreamInspector,
} from "./jetstream-inspector.js";
export type {
  JetStreamPublishTransport,
  TargetMessage,
  TargetPubAck,
  TargetStreamCheck,
} from "./jetstream-publish-transport.js";
export { createJetStreamPublishTransport } from "./jetstream-publish-transport.js";
export type {
  CreateJobPublisherOptions,
  JobPublisher,
  PublishOptions,
  PublishResult,
} from "./job-publisher.js";
export { createJobPublisher } from "./job-publisher.js";
export type { MessageLoop, StartMessageLoopOptions } from "./message-loop.js";
export { startMessageLoop } from "./message-loop.js";
export { isNatsUnavailable } from "./nats-unavailable.js";
export type { AgentConsumer } from "./provisioning.js";
export {
  ensureAgentConsumer,
  ensureDeadLetterStream,
  ensureJobsStream,
  isNotFound,
} from "./provisioning.js";
export type { SubjectPublisher } from "./subject-publisher.js";
export { createSubjectPublisher } from "./subject-publisher.js";
export {
  agentConsumerName,
  deadLetterAdvisorySubjects,
  deadLetterStreamName,
  jobSubject,
  jobsSubjects,
  millis,
  nanos,
  submitSubject,
} from "./subjects.js";
export { isJetStreamUnavailable, openJobsStream, withJobPublisher } from "./with-job-publisher.js";
