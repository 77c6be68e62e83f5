/** Job IDs: start alphanumeric, then up to 127 of `A-Za-z0-9._:-`. `#` never occurs, so `<jobId>#retry-<n>` is unambiguous. */
export const JOB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** Agent names become NATS subject tokens. */
export const AGENT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Target aliases in the config (repos, roots, publish and http targets). */
export const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function isJobId(s: unknown): s is string {
  return typeof s === "string" && JOB_ID_PATTERN.test(s);
}

/** The deterministic key of effect `index` of job `jobId`. */
export function effectKey(jobId: string, index: number): string {
  return `${jobId}/${index}`;
}

/** Splits an effect key back into its job ID and index, or undefined when it is not one. */
export function parseEffectKey(key: string): { jobId: string; index: number } | undefined {
  const slash = key.lastIndexOf("/");
  if (slash <= 0) return undefined;
  const jobId = key.slice(0, slash);
  const idx = key.slice(slash + 1);
  if (!JOB_ID_PATTERN.test(jobId) || !/^(0|[1-9][0-9]{0,5})$/.test(idx)) return undefined;
  return { jobId, index: Number(idx) };
}

/** The trailer that git effects carry in their commit message. */
export const EFFECT_TRAILER = "Idem-Effect";

/** The Nats-Msg-Id under which a dead-lettered job is re-enqueued the n-th time. */
export function retryMsgId(jobId: string, n: number): string {
  return `${jobId}#retry-${n}`;
}
