import { type EffectRecord, type EffectState, isSettledEffect } from "@idem/journal";
import type { EffectSpec } from "@idem/schema";

/**
 * What to do with one effect of generation g. `probe`: ask the target, then record `present` or
 * apply. `apply-unprobeable`: write the intent and apply without a probe (the kind cannot be
 * probed). `skip` and `uncertain` carry the reason stored with the ledger row.
 */
export type EffectDecision =
  | { action: "skip"; reason: string }
  | { action: "probe" }
  | { action: "uncertain"; reason: string }
  | { action: "apply-unprobeable" };

/** The two questions the decision asks the effects façade; nothing here touches a target. */
export interface EffectCapabilities {
  probeable(spec: EffectSpec): boolean;
  targetDedup(spec: EffectSpec): boolean;
}

/** Everything `decideEffect` reads: one effect of one generation, its ledger and the façade's answers. */
export interface DecideEffectInput {
  spec: EffectSpec;
  key: string;
  /** The generation being interpreted (or planned, for a replay). */
  generation: number;
  /**
   * Every generation's ledger row of this key (`journal.ledger.history(key)`), any order; only the
   * generation and state are read.
   */
  ledger: readonly Pick<EffectRecord, "generation" | "state">[];
  /** The run was created with `--force-unprobeable`: re-send unprobeable effects sent before. */
  forceUnprobeable: boolean;
  effects: EffectCapabilities;
  /**
   * For a kind whose later effects supersede earlier ones (file.write): the job ID of a later
   * recorded output with an effect of the same supersede key (`SupersedeIndex`).
   */
  supersededBy?: string;
  /** What the effect acts on, for the reason of a skip (`outbox:status.md`: `describeEffect`). */
  subject?: string;
}

/** An intent whose outcome was never learned: the effect may or may not have happened. */
const UNKNOWN_OUTCOME: readonly EffectState[] = ["intended", "uncertain"];
/** The answer for every probeable effect not settled in g: one object, never changed. */
const PROBE: EffectDecision = Object.freeze({ action: "probe" } as const);

/**
 * docs/concepts.md "Deciding an effect", the one decision the interpreter and the replay
 * plan share. Pure: it reads only its input.
 *
 * In order: settled in g -> skip; an effect superseded by a later recorded one (file.write: a
 * later write to the same path) -> skip (never rolled back); a probeable kind -> probe (the target is the truth, whatever the ledger says); an
 * unprobeable kind settled `applied` in an earlier generation -> skip unless forced; an unprobeable
 * kind without target dedup whose intent never got a result (this generation, or an earlier one
 * not answered by a settlement in a later generation, unless forced) -> uncertain, never re-sent
 * blindly; otherwise apply without a probe (with target dedup the target absorbs a repeat under the
 * same key). So a `dlq resolve --skipped` of the latest generation answers the earlier attempts too,
 * in whatever order the retries, replays and the resolve came.
 */
export function decideEffect(input: DecideEffectInput): EffectDecision {
  const { spec, generation, ledger, effects } = input;
  // A loop, not `find`: a replay plan decides 10,000s of effects, most with a ledger of one row.
  let current: (typeof ledger)[number] | undefined;
  for (const r of ledger) {
    if (r.generation === generation) {
      current = r;
      break;
    }
  }
  if (current && isSettledEffect(current.state)) {
    return { action: "skip", reason: `settled ${current.state} in generation ${generation}` };
  }
  if (current?.state === "uncertain") {
    return {
      action: "uncertain",
      reason: `outcome unknown in generation ${generation}: waiting for a human decision`,
    };
  }
  if (input.supersededBy !== undefined) {
    return {
      action: "skip",
      reason: `superseded by the later write of ${input.supersededBy}${input.subject === undefined ? "" : ` to ${input.subject}`}`,
    };
  }
  if (effects.probeable(spec)) return PROBE;

  const earlier = ledger.filter((r) => r.generation < generation);
  const appliedBefore = earlier.find((r) => r.state === "applied");
  if (appliedBefore && !input.forceUnprobeable) {
    return {
      action: "skip",
      reason: `unprobeable, applied in generation ${appliedBefore.generation}`,
    };
  }
  if (!effects.targetDedup(spec)) {
    if (current?.state === "intended") {
      return {
        action: "uncertain",
        reason: `unprobeable and not deduplicated at its target: intent of generation ${generation} has no result`,
      };
    }
    // An unknown outcome is answered by a settlement in a later generation: a person who resolved
    // the key (`dlq resolve`) looked for it under its one Idempotency-Key, for every attempt.
    let lastSettled = 0;
    for (const r of earlier)
      if (isSettledEffect(r.state) && r.generation > lastSettled) lastSettled = r.generation;
    const unknownBefore = earlier.find(
      (r) => UNKNOWN_OUTCOME.includes(r.state) && r.generation > lastSettled,
    );
    if (unknownBefore && !input.forceUnprobeable) {
      return {
        action: "uncertain",
        reason: `unprobeable and not deduplicated at its target: intent of generation ${unknownBefore.generation} has no result`,
      };
    }
  }
  return { action: "apply-unprobeable" };
}
