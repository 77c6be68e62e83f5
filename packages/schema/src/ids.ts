/**
 * Job IDs: start alphanumeric, then up to 127 of `A-Za-z0-9._:-`.
 *
 * `#` never occurs, so `<jobId>#retry-<n>` is unambiguous.
 */
export const JOB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** Agent names: lowercase, up to 64 characters, since they become NATS subject tokens. */
export const AGENT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Target aliases in the config (repos, roots, publish and http targets): up to 64 characters. */
export const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Whether a value is a string that is a valid job ID (JOB_ID_PATTERN). Never throws. */
export function isJobId(s: unknown): s is string {
  return typeof s === "string" && JOB_ID_PATTERN.test(s);
}

/**
 * The deterministic key of effect `index` of job `jobId`: `<jobId>/<index>`.
 *
 * The same output always gives the same keys, so a replayed or retried apply finds the effect it
 * already made (the git trailer, the ledger row, the idempotency key) instead of making it again.
 */
export function effectKey(jobId: string, index: number): string {
  return `${jobId}/${index}`;
}

/**
 * Splits an effect key back into its job ID and index.
 *
 * Undefined when the text is not an effect key; never throws.
 */
export function parseEffectKey(key: string): { jobId: string; index: number } | undefined {
  const slash = key.lastIndexOf("/");
  if (slash <= 0) return undefined;
  const jobId = key.slice(0, slash);
  const idx = key.slice(slash + 1);
  if (!JOB_ID_PATTERN.test(jobId) || !/^(0|[1-9][0-9]{0,5})$/.test(idx)) return undefined;
  return { jobId, index: Number(idx) };
}

/**
 * The Nats-Msg-Id under which a dead-lettered job is re-enqueued the n-th time.
 *
 * `<jobId>#retry-<n>`: `#` never occurs in a job ID, so it cannot collide with a first enqueue, and
 * JetStream's duplicate window makes the same retry idempotent.
 */
export function retryMsgId(jobId: string, n: number): string {
  return `${jobId}#retry-${n}`;
}
