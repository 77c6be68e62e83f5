import type { EffectState } from "../domain/states.js";
import type { WriteDurability } from "./durability.js";
import type { Lease } from "./lease.js";

/** One row of the effects ledger: effect `key` in one generation. */
export interface EffectRecord {
  key: string;
  generation: number;
  jobId: string;
  /** The effect's position in its output. */
  idx: number;
  kind: string;
  specHash: string;
  state: EffectState;
  detail: Record<string, unknown> | null;
  attempts: number;
  updatedAt: number;
}

/** The intent of an effect, written before it is applied. */
export interface IntendInput {
  key: string;
  idx: number;
  kind: string;
  specHash: string;
  detail?: Record<string, unknown>;
}

/** What a bulk ledger read returns for one row: all a decision or a plan needs. */
export interface LedgerEntry {
  generation: number;
  state: EffectState;
}

/** A person's decision on the open effect of a dead run (see `JournalLedger.resolve`). */
export interface EffectResolution {
  /** `present` when a probe found the effect at its target; `applied` on the person's word. */
  decision: "applied" | "present" | "skipped";
  /** Why: required, recorded with the event. */
  reason: string;
  /** Who decided. */
  actor: string;
  /** The key of the effect the caller probed: the effect resolved must be that one. */
  expectKey?: string;
}

/** The effects ledger: one row per effect key and generation. */
export interface JournalLedger {
  /**
   * Writes the intent of effect `key` in the lease's generation. Idempotent: an intended or failed
   * row is reopened (one more attempt); any other existing row is returned as it is.
   * @throws LEASE_LOST when the token is stale.
   */
  intend(lease: Lease, effect: IntendInput): Promise<EffectRecord>;
  /**
   * Moves an effect of the lease's generation to a new state with its detail (e.g. the commit sha).
   * With `soon`, answered once committed and durable shortly after (see WriteDurability): only for
   * a state the next holder finds again by probing the target if a power loss takes it.
   * @throws LEASE_LOST when the token is stale; INVALID_STATE when the effect has no intent.
   */
  settle(
    lease: Lease,
    key: string,
    state: EffectState,
    detail?: Record<string, unknown>,
    durability?: WriteDurability,
  ): Promise<void>;
  /** The ledger of one output, every generation unless one is named. */
  forJob(jobId: string, generation?: number): Promise<EffectRecord[]>;
  /** Every generation's row of one effect key, oldest first. */
  history(key: string): Promise<EffectRecord[]>;
  /** Every generation's rows of the effects of many outputs, by effect key, read in bulk. */
  ofJobs(jobIds: readonly string[]): Promise<ReadonlyMap<string, readonly LedgerEntry[]>>;
  /**
   * A human's decision on the open effect of a dead run (uncertain, else failed, else intended):
   * settles it `applied`, `present` (a probe found it at its target) or `skipped`, records the
   * reason and actor as an event, and returns the run to pending once no effect is uncertain.
   * With `expectKey`, the effect it would settle must be that one (the caller probed it).
   * @throws INVALID_INPUT without a reason; NOT_FOUND without a run; INVALID_STATE when the latest
   * run is not dead, has nothing to resolve, or its open effect is not `expectKey`.
   */
  resolve(jobId: string, resolution: EffectResolution): Promise<EffectRecord>;
}
