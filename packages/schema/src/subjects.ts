// idem's NATS subjects are vocabulary: the executor, the CLI and any client (even one without
// @idem/nats, as @idem/client) name them alike. The JetStream-only names (consumers, dead-letter
// streams and advisories) stay in @idem/nats.

/** `nats.subjectPrefix`'s default: jobs for agent `writer` go to `idem.jobs.writer`. */
export const DEFAULT_SUBJECT_PREFIX = "idem";

/** A subject prefix as `nats.subjectPrefix` takes it: dot-separated tokens, no wildcards. */
export const SUBJECT_PREFIX_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** The subject a job for `agent` is published on: `<prefix>.jobs.<agent>`. Pure. */
export function jobSubject(subjectPrefix: string, agent: string): string {
  return `${subjectPrefix}.jobs.${agent}`;
}

/** The subjects the jobs stream captures: `<prefix>.jobs.>`. Pure. */
export function jobsSubjects(subjectPrefix: string): string[] {
  return [`${subjectPrefix}.jobs.>`];
}

/** The request/reply subject of the submit API: `<prefix>.submit`. Pure. */
export function submitSubject(subjectPrefix: string): string {
  return `${subjectPrefix}.submit`;
}
