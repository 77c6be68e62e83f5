import type { Effects, ProbeResult } from "@idem/effects";
import type { OutputRecord } from "@idem/journal";
import { type Config, type EffectSpec, effectKey, effectTarget } from "@idem/schema";
import { type EffectFilter, effectInFilter } from "./effect-filter.js";

/** One effect a replay plan asks its target about. */
export type ProbeItem = { spec: EffectSpec; key: string };
/** A batch probe's answers, or why the batch failed as a whole. */
export type BatchOutcome = { results: Map<string, ProbeResult> } | { error: unknown };

/**
 * `effectTarget` for the many effects of a plan: the name of a git target is made once per
 * repository and branch, not once per effect (a plan of 10,000 commits to one branch names one).
 */
export function targetNames(config: Config): (spec: EffectSpec) => string | undefined {
  const git = new Map<string, Map<string | undefined, string>>();
  return (spec) => {
    if (spec.kind !== "git.commit" && spec.kind !== "git.patch") return effectTarget(spec, config);
    let byBranch = git.get(spec.repo);
    if (!byBranch) {
      byBranch = new Map();
      git.set(spec.repo, byBranch);
    }
    let target = byBranch.get(spec.branch);
    if (target === undefined) {
      target = effectTarget(spec, config) as string;
      byBranch.set(spec.branch, target);
    }
    return target;
  };
}

/**
 * One-item probes of each git target, started when the plan first meets it, one target after
 * another. Their answers and failures are ignored: they exist to start the target's git processes
 * and history scan early (see `buildReplayPlan`).
 */
export class GitWarmUp {
  private readonly seen = new Set<string>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly targetOf: (spec: EffectSpec) => string | undefined,
    private readonly effects: Effects,
    private readonly only: EffectFilter | null,
  ) {}

  meet(o: OutputRecord): void {
    const specs = o.output.effects;
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i] as EffectSpec;
      if (spec.kind !== "git.commit" && spec.kind !== "git.patch") continue;
      if (!effectInFilter(spec, this.only)) continue;
      const target = this.targetOf(spec) as string;
      if (this.seen.has(target)) continue;
      this.seen.add(target);
      const item = { spec, key: effectKey(o.jobId, i) };
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
    return { results: await effects.probeBatch(items, { simulate: needsSimulation(items) }) };
  } catch (error) {
    return { error };
  }
}

/**
 * Whether a target's probes depend on the plan's own earlier applies: a patch applies against the
 * tree the earlier steps leave, and a file written twice in the plan reads back its earlier write.
 * A git.commit is present or absent by its key alone, so a group of commits is probed as is
 * (simulating it would rewrite a scratch tree per absent commit for nothing).
 */
function needsSimulation(items: readonly { spec: EffectSpec }[]): boolean {
  const paths = new Set<string>();
  for (const { spec } of items) {
    if (spec.kind === "git.patch") return true;
    if (spec.kind === "file.write") {
      const id = `${spec.root}\0${spec.path}`;
      if (paths.has(id)) return true;
      paths.add(id);
    }
  }
  return false;
}
