export { closeNats, connectNats } from "./connect.js";
export type { DeadLetterAdvisory, StartDeadLetterMonitorOptions } from "./dead-letter-monitor.js";
export { DEAD_LETTER_CONSUMER, startDeadLetterMonitor } from "./dead-letter-monitor.js";
export type {
  CreateJobPublisherOptions,
  JobPublisher,
  PublishOptions,
  PublishResult,
} from "./job-publisher.js";
export { createJobPublisher } from "./job-publisher.js";
export type { MessageLoop, StartMessageLoopOptions } from "./message-loop.js";
export { startMessageLoop } from "./message-loop.js";
export type { AgentConsumer } from "./provisioning.js";
export {
  effectiveAckWaitMs,
  ensureAgentConsumer,
  ensureDeadLetterStream,
  ensureJobsStream,
} from "./provisioning.js";
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
export { withJobPublisher } from "./with-job-publisher.js";
export * from "./delivery/index.js";
