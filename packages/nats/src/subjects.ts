// The subjects every part names (jobs, submit) are @idem/schema's; re-exported for this package's
// callers. What follows is JetStream's own.
export { jobSubject, jobsSubjects, submitSubject } from "@idem/schema";

/** The durable pull consumer of one agent on the jobs stream. */
export function agentConsumerName(agent: string): string {
  return `idem-executor-${agent}`;
}

/** The stream that keeps the dead-letter advisories of the jobs stream. */
export function deadLetterStreamName(jobsStream: string): string {
  return `${jobsStream}_DEAD_LETTERS`;
}

/** The advisory subjects JetStream publishes when a job of `jobsStream` is given up on. */
export function deadLetterAdvisorySubjects(jobsStream: string): string[] {
  return [
    `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${jobsStream}.*`,
    `$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.${jobsStream}.*`,
  ];
}

/** Milliseconds to the nanoseconds JetStream's API speaks. */
export function nanos(ms: number): number {
  return ms * 1_000_000;
}

/** Nanoseconds from JetStream's API to milliseconds. */
export function millis(ns: number): number {
  return Math.round(ns / 1_000_000);
}
