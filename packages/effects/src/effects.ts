import type { ApplyOrder, ProbeHint, ProbeResult } from "@idem/kit";
import type { EffectSpec } from "@idem/schema";
import type { KindRegistry } from "./registry/kind-registry.js";

/** How a probe of one effect is made: what an earlier probe stored, and when idem could first have applied it. */
export interface ProbeOptions {
  hint?: ProbeHint | undefined;
  /**
   * A time (ms) before which idem never applied the effect: its output's recording time. Kinds
   * that list a target's recent items start there. Default 0 (the beginning).
   */
  since?: number | undefined;
}

/** How an apply of one effect is made (see `EffectKind.apply` of @idem/kit). */
export interface ApplyOptions extends ProbeOptions {
  probed?: ProbeResult | undefined;
  order?: ApplyOrder | undefined;
}

/**
 * The effects of one config: every registered kind (idem's own and the config's) behind one
 * façade, opened on first use, plus the batch operations of replay and audit.
 */
export interface Effects {
  /** The kinds this façade serves. */
  readonly kinds: KindRegistry;
  /**
   * The kind's `probe`: never changes the target.
   * @throws IdemError INVALID_INPUT for a kind that is not registered; the kind's errors.
   */
  probe(spec: EffectSpec, key: string, options?: ProbeOptions): Promise<ProbeResult>;
  /** The kind's `apply`: at most once per key, safe to call again. */
  apply(spec: EffectSpec, key: string, options?: ApplyOptions): Promise<Record<string, unknown>>;
  /** The kind's `probeable` (default true). */
  probeable(spec: EffectSpec): boolean;
  /** The kind's `targetDedup` (default false). */
  targetDedup(spec: EffectSpec): boolean;
  /**
   * True when the spec's target queues its applies and builds each on the target's state when it
   * goes out (a git branch: a remote's pushes, a local one's batches): a probe may then run while
   * earlier applies there are still queued, and an absent answer stays good (the apply checks what
   * landed meanwhile).
   */
  queuedApplies(spec: EffectSpec): boolean;
  /**
   * Replay: one pass per target answers many keys (one git log of the branch for all keys), by the
   * kinds' `probeBatch`. Items on one target are in recording order; with `simulate: true` each is
   * probed as if the earlier absent ones had been applied, so a chain of dependent patches lost in
   * an incident shows absent, not conflict. Never changes the real target. An item whose spec fails
   * validation at the target is reported as a conflict carrying the error's code and message;
   * items of kinds that cannot be probed are left out.
   * @throws IdemError of any other failure (TARGET_MISSING, UNAVAILABLE, LOCKED, ...).
   */
  probeBatch(
    items: { spec: EffectSpec; key: string; since?: number }[],
    options?: { simulate?: boolean },
  ): Promise<Map<string, ProbeResult>>;
  /**
   * For `idem audit`: the keys present at the spec's target with where each is (a git branch's
   * `Idem-Effect` trailers and their commits), in one scan; undefined for a kind that cannot scan.
   * @throws IdemError UNKNOWN_ALIAS, SANDBOX_VIOLATION (a branch not allowed), TARGET_MISSING.
   */
  scan(spec: EffectSpec): Promise<Map<string, string[]> | undefined>;
  /**
   * The batch a probe of the spec joins in `probeBatch` (a git branch), or undefined for a kind
   * without a batch probe: a replay plan warms each batch's target up early.
   */
  batchTarget(spec: EffectSpec): string | undefined;
  /**
   * Specs standing for every target the config defines that a kind can scan (each configured git
   * branch), for an audit that also looks where the journal knows no effect.
   */
  configuredScans(): EffectSpec[];
  /** The target a scan of the spec covers (`site@main`), or undefined for a kind that cannot scan. */
  scanTarget(spec: EffectSpec): string | undefined;
  /**
   * Closes every kind opened (ends the long-lived git processes, drops repo locks, removes the
   * scratch folder). A transport given in the options is not closed.
   */
  close(): Promise<void>;
}
