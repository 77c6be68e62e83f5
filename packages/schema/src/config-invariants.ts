import type { Config } from "./config.js";

/**
 * The redelivery horizon H of invariant 7, in milliseconds.
 *
 * `queue.maxDeliver` times the largest of `queue.ackWaitMs`, every `queue.backoffMs` step and the
 * longest agent timeout. A job can come back until H has passed, so nothing that dedups it may be
 * forgotten sooner.
 */
export function redeliveryHorizonMs(c: Config): number {
  const agentMax = Math.max(0, ...Object.values(c.agents).map((a) => a.timeoutMs));
  return c.queue.maxDeliver * Math.max(c.queue.ackWaitMs, ...c.queue.backoffMs, agentMax);
}

/** A broken invariant of a config, with the key at fault and the fix. */
export interface InvariantViolation {
  /** The config key at fault. */
  key: string;
  message: string;
  /** What to do about it. */
  fix: string;
}

/**
 * Checks invariant 7 of docs/concepts.md (docs/configuration.md, "Invariants"): nothing is forgotten while it can still come back.
 *
 * Retention must be longer than H (plus `nats.maxAgeMs`), the duplicate window must cover publish
 * retries and fit in the stream's max age, and JetStream needs more deliveries than backoff steps.
 *
 * Returns the violations (empty when the config is sound); never throws. Pure; checked before any
 * connection by the executor, by `idem prune` and by `idem doctor`.
 */
export function checkConfigInvariants(c: Config): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  const h = redeliveryHorizonMs(c);
  const days = (x: number) => `${(x / 86_400_000).toFixed(3)}d`;
  if (c.journal.retentionDays !== null) {
    const retention = c.journal.retentionDays * 86_400_000;
    const need = h + (c.nats ? c.nats.maxAgeMs : 0);
    if (retention <= need) {
      out.push({
        key: "journal.retentionDays",
        message: `retentionDays ${c.journal.retentionDays} (${retention} ms) must exceed the redelivery horizon H = ${h} ms${c.nats ? ` plus nats.maxAgeMs ${c.nats.maxAgeMs} ms` : ""} = ${need} ms (${days(need)})`,
        fix: `raise journal.retentionDays above ${Math.ceil(need / 86_400_000)} or shorten the queue and agent timeouts`,
      });
    }
  }
  if (c.nats) {
    if (c.nats.duplicateWindowMs < c.nats.publishRetryMs) {
      out.push({
        key: "nats.duplicateWindowMs",
        message: `duplicateWindowMs ${c.nats.duplicateWindowMs} must cover publishRetryMs ${c.nats.publishRetryMs}, or a retried publish can be stored twice`,
        fix: "raise nats.duplicateWindowMs or lower nats.publishRetryMs",
      });
    }
    if (c.nats.duplicateWindowMs > c.nats.maxAgeMs) {
      out.push({
        key: "nats.duplicateWindowMs",
        message: `duplicateWindowMs ${c.nats.duplicateWindowMs} must be at most maxAgeMs ${c.nats.maxAgeMs}`,
        fix: "lower nats.duplicateWindowMs or raise nats.maxAgeMs",
      });
    }
    if (c.queue.maxDeliver <= c.queue.backoffMs.length) {
      out.push({
        key: "queue.maxDeliver",
        message: `maxDeliver ${c.queue.maxDeliver} must be greater than the number of backoff steps (${c.queue.backoffMs.length}) on JetStream`,
        fix: "raise queue.maxDeliver or remove steps from queue.backoffMs",
      });
    }
  }
  return out;
}
