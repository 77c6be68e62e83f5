import type { EffectKind, EffectSpec } from "@idem/schema";
import type { z } from "zod";

/**
 * Where an effect stands at its target. `present` and `absent` carry a detail to store with the
 * intent or result: for git, `absent.detail.base` is the branch head that was probed, and apply moves
 * the branch from exactly that commit (compare-and-swap). `conflict`: the target moved so that the
 * effect cannot be applied as written; never forced.
 */
export type ProbeResult =
  | { status: "present"; detail: Record<string, unknown> }
  | { status: "absent"; detail: Record<string, unknown> }
  | { status: "conflict"; reason: string };

/**
 * What an earlier probe recorded with the intent. With `base`, a git probe after a crash scans only
 * `base..branch` for the key instead of anything larger.
 */
export interface ProbeHint {
  base?: string;
}

/** Where a queued apply stands: waiting in its target's queue, succeeded (applied or found present), or failed. */
export interface ApplyTicket {
  readonly state: "queued" | "done" | "failed";
}

/**
 * Order between the applies of one target that different runs make at once (the interpreter's
 * pipeline). A kind that queues its applies (a remote git branch's pushes) calls `queued` as soon as
 * this apply stands in the target's queue behind every apply queued before it, with its ticket; a
 * later apply given that ticket as `after` goes out only after it and fails with ORDER_BLOCKED,
 * changing nothing, when it did not succeed. Kinds without a queue ignore both: the end of their
 * apply is the next one's turn.
 */
export interface ApplyOrder {
  after?: ApplyTicket | undefined;
  queued?: ((ticket: ApplyTicket) => void) | undefined;
}

/**
 * One effect kind: its schema, whether it can be probed or is deduplicated at the target, and the
 * probe and apply that make it happen once.
 */
export interface EffectHandler<S extends EffectSpec = EffectSpec> {
  /** The effect kind it handles (`git.commit`, ...). */
  readonly kind: S["kind"];
  /** The zod schema of its spec, as the agent output carries it. */
  readonly schema: z.ZodType<S>;
  /** True when `probe` can tell whether the effect happened (git, file, http with probeUrl). */
  probeable(spec: S): boolean;
  /** True when the target itself absorbs a repeat under the same key (NATS msg id, idempotent http). */
  targetDedup(spec: S): boolean;
  /**
   * Asks the target whether the effect with `key` happened. Never changes the target.
   * @throws IdemError SANDBOX_VIOLATION for a spec outside its target; TARGET_MISSING; UNAVAILABLE.
   */
  probe(spec: S, key: string, hint?: ProbeHint): Promise<ProbeResult>;
  /**
   * Makes the effect happen once and returns the detail to store (e.g. `{ commit }`). With an
   * `absent` probe result, git effects move the branch from exactly the probed base and fail with
   * TARGET_MOVED if it moved. Without one, apply probes first under the target's lock and returns the
   * present detail without writing. Safe to call again after a crash at any point inside it.
   * `order` keeps it behind another run's queued apply on the same target (see ApplyOrder).
   * @throws IdemError ORDER_BLOCKED when `order.after` failed (nothing changed).
   */
  apply(
    spec: S,
    key: string,
    probed?: ProbeResult,
    order?: ApplyOrder,
  ): Promise<Record<string, unknown>>;
}

/** The effects of one config: every kind behind one façade, plus the batch operations of replay and audit. */
export interface Effects {
  /** The handler of one kind. @throws IdemError INVALID_INPUT for an unknown kind. */
  handler(kind: EffectKind): EffectHandler;
  /** `EffectHandler.probe` of the spec's kind: never changes the target. */
  probe(spec: EffectSpec, key: string, hint?: ProbeHint): Promise<ProbeResult>;
  /** `EffectHandler.apply` of the spec's kind: at most once per key, safe to call again. */
  apply(
    spec: EffectSpec,
    key: string,
    probed?: ProbeResult,
    order?: ApplyOrder,
  ): Promise<Record<string, unknown>>;
  /** `EffectHandler.probeable` of the spec's kind. */
  probeable(spec: EffectSpec): boolean;
  /** `EffectHandler.targetDedup` of the spec's kind. */
  targetDedup(spec: EffectSpec): boolean;
  /**
   * True when the spec's target queues its applies and builds each on the target's state when it
   * goes out (a remote git branch's pushes): a probe may then run while earlier applies there are
   * still queued, and an absent answer stays good (the apply checks what landed meanwhile).
   */
  queuedApplies(spec: EffectSpec): boolean;
  /**
   * Replay: one pass per target answers many keys (one git log of the branch for all keys). Items
   * on one target are in recording order; with `simulate: true` it probes each against a scratch
   * copy (temporary index) as if the earlier absent ones had been applied, so a chain of dependent
   * patches lost in an incident shows absent, not conflict. Never changes the real target. An item
   * whose spec fails validation at the target is reported as a conflict carrying the error's code
   * and message; items of kinds that cannot be probed are left out.
   * @throws IdemError of any other failure (TARGET_MISSING, UNAVAILABLE, LOCKED, ...).
   */
  probeBatch(
    items: { spec: EffectSpec; key: string }[],
    options?: { simulate?: boolean },
  ): Promise<Map<string, ProbeResult>>;
  /**
   * For `idem audit`: every Idem-Effect key reachable from the branch and its commits, in one scan.
   * @throws IdemError UNKNOWN_ALIAS, SANDBOX_VIOLATION (a branch not allowed), TARGET_MISSING.
   */
  scanTrailers(repoAlias: string, branch?: string): Promise<Map<string, string[]>>;
  /**
   * Ends the long-lived git processes, drops repo locks and removes the scratch folder; forgets
   * which publish streams were checked. A transport given in the options is not closed.
   */
  close(): Promise<void>;
}
