import type { AnyEffectKind, KindContext, KindGuarantee } from "./effect-kind.js";

/** The guarantees under which no crash may leave an effect uncertain. */
const NEVER_UNCERTAIN: readonly KindGuarantee[] = [
  "exactly-once",
  "exactly-once-in-effect",
  "target-dedup",
];

/**
 * The strongest guarantee a kind's own pure parts let idem state, never more than it declares:
 * `uncertain-window` when it declares one that never ends uncertain, yet for its first valid
 * sample its probe cannot tell (`probeable` false) and the target absorbs no repeat (`targetDedup`
 * not true), as the drill would show. Else the declared guarantee: what `idem kinds` and the MCP
 * tools state, and what only the drill (`idem kinds test`, whose report says `shown`) confirms
 * against the target. Pure; a part that throws leaves the declared guarantee.
 */
export function showableGuarantee(kind: AnyEffectKind, ctx: KindContext<unknown>): KindGuarantee {
  if (!NEVER_UNCERTAIN.includes(kind.guarantee) || !kind.samples || !kind.probeable)
    return kind.guarantee;
  try {
    const spec = kind.samples.valid(0, ctx);
    if (kind.probeable(spec, ctx) || kind.targetDedup?.(spec, ctx) === true) return kind.guarantee;
    return "uncertain-window";
  } catch {
    return kind.guarantee;
  }
}
