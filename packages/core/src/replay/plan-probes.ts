import { type Effects, type ProbeResult, supersedeKeyOf, targetsOfEffect } from "@idem/effects";
import type { OutputRecord } from "@idem/journal";
import { type EffectSpec, effectKey } from "@idem/schema";
import { type EffectFilter, effectInFilter } from "./effect-filter.js";

/** One effect a replay plan asks its target about. */
export type ProbeItem = { spec: EffectSpec; key: string; since: number };
/** A batch probe's answers, or why the batch failed as a whole. */
export type BatchOutcome = { results: Map<string, ProbeResult> } | { error: unknown };

/**
 * The ordering target of an effect: its kind's first `targets`, asked of the kind for each effect
 * (a kind's target may depend on any field of its spec: a GitHub comment's issue number).
 */
export function targetNames(effects: Effects): (spec: EffectSpec) => string | undefined {
  return (spec) => targetsOfEffect(spec, effects.kinds)[0];
}

/**
 * One-item probes of each batch target (a git branch), started when the plan first meets it, one
 * target after another. Their answers and failures are ignored: they exist to start the target's
 * processes and scan early (see `buildReplayPlan`).
 */
export class BatchWarmUp {
  private readonly seen = new Set<string>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly effects: Effects,
    private readonly only: EffectFilter | null,
  ) {}

  meet(o: OutputRecord): void {
    const specs = o.output.effects;
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i] as EffectSpec;
      const target = this.effects.batchTarget(spec);
      if (target === undefined || this.seen.has(target)) continue;
      if (!effectInFilter(spec, this.only, this.effects.kinds)) continue;
      this.seen.add(target);
      const item = { spec, key: effectKey(o.jobId, i), since: o.recordedAt };
      this.chain = this.chain.then(() => probe(this.effects, [item]));
    }
  }

  /** Resolves when every warm-up started so far has ended. Never rejects. */
  done(): Promise<unknown> {
    return this.chain;
  }
}

/** One batch probe of a target's items, in order. Never rejects. */
export async function probe(effects: Effects, items: ProbeItem[]): Promise<BatchOutcome> {
  try {
    return {
      results: await effects.probeBatch(items, { simulate: needsSimulation(effects, items) }),
    };
  } catch (error) {
    return { error };
  }
}

/**
 * Whether a target's probes depend on the plan's own earlier applies: a kind whose probe depends
 * on the earlier effects on its target (a patch applies against the tree the earlier steps leave),
 * or two effects one supersedes the other of (a file written twice reads back its earlier write).
 * A git.commit is present or absent by its key alone, so a group of commits is probed as is
 * (simulating it would rewrite a scratch tree per absent commit for nothing).
 */
function needsSimulation(effects: Effects, items: readonly { spec: EffectSpec }[]): boolean {
  const seen = new Set<string>();
  for (const { spec } of items) {
    if (effects.kinds.get(spec.kind)?.probeDependsOnEarlier === true) return true;
    const id = supersedeKeyOf(spec, effects.kinds);
    if (id === undefined) continue;
    if (seen.has(id)) return true;
    seen.add(id);
  }
  return false;
}
