import { aliasesOfEffect, type KindRegistry, knownAliasesOf, targetsOfEffect } from "@idem/effects";
import type { RunRecord } from "@idem/journal";
import { type Config, type EffectSpec, IdemError } from "@idem/schema";

/**
 * Which effects of the selected outputs a replay takes (`--kind`, `--repo`, `--root`, `--target`).
 * An effect is in the filter when its kind is one of `kinds` (or `kinds` is absent) and an alias
 * it names (its kind's `aliases`) is one of `repos`, `roots` or `targets` by type (git effects
 * name a repo, file.write a root, nats.publish and http.request a target), or none of those three
 * is given: `--kind` narrows, the places add up. Names are config aliases. The run record carries it (`RunRecord.only`), so every interpreter honours it.
 */
export type EffectFilter = NonNullable<RunRecord["only"]>;

/** Who made a replayed generation, why, of what, and which generation it replays (`RunRecord.replay`). */
export type ReplayLineage = NonNullable<RunRecord["replay"]>;

/** The replay option each filter field comes from, as errors name it. */
export const FILTER_OPTIONS = {
  kinds: "kind",
  repos: "repo",
  roots: "root",
  targets: "target",
} as const satisfies Record<keyof EffectFilter, string>;

/** The filter field of each alias type a kind names. */
const FIELD_OF_ALIAS: Record<string, "repos" | "roots" | "targets"> = {
  repo: "repos",
  root: "roots",
  target: "targets",
};

/** Whether one effect is in the filter; null or undefined: every effect is. */
export function effectInFilter(
  spec: EffectSpec,
  only: EffectFilter | null | undefined,
  kinds: KindRegistry,
): boolean {
  if (!only) return true;
  if (only.kinds?.length && !only.kinds.includes(spec.kind)) return false;
  const { repos, roots, targets } = only;
  if (!repos?.length && !roots?.length && !targets?.length) return true;
  return aliasesOfEffect(spec, kinds).some((a) => {
    const field = FIELD_OF_ALIAS[a.type];
    return field !== undefined && (only[field]?.includes(a.name) ?? false);
  });
}

/** The ordering targets of the effects in the filter, sorted (as `effectTargetsOf` gives them). */
export function targetsInFilter(
  specs: readonly EffectSpec[],
  only: EffectFilter,
  config: Config,
  kinds: KindRegistry,
): string[] {
  const set = new Set<string>();
  for (const spec of specs) {
    if (!effectInFilter(spec, only, kinds)) continue;
    for (const t of targetsOfEffect(spec, config, kinds)) set.add(t);
  }
  return [...set].sort();
}

/** What a filter may name in this config: every registered kind and every alias the kinds know. */
export function filterChoices(
  config: Config,
  kinds: KindRegistry,
): { kind: string[]; repo: string[]; root: string[]; target: string[] } {
  const aliases = knownAliasesOf(kinds, config);
  return {
    kind: kinds.names(),
    repo: aliases.get("repo") ?? [],
    root: aliases.get("root") ?? [],
    target: aliases.get("target") ?? [],
  };
}

/**
 * A filter checked against the config, with its empty lists dropped; null when nothing is left
 * (every effect). What can never match is refused before anything is read or recorded.
 * @throws INVALID_INPUT naming the option (`--kind`, `--repo`, `--root`, `--target`) and the
 *   unknown name, with `details: { option, value, known }`: a kind that is not registered, or a
 *   repo, root or target no registered kind knows in the config.
 */
export function checkEffectFilter(
  only: EffectFilter | null | undefined,
  config: Config,
  kinds: KindRegistry,
): EffectFilter | null {
  if (!only) return null;
  const choices = filterChoices(config, kinds);
  const known: Record<keyof EffectFilter, readonly string[]> = {
    kinds: choices.kind,
    repos: choices.repo,
    roots: choices.root,
    targets: choices.target,
  };
  const out: EffectFilter = {};
  for (const field of Object.keys(FILTER_OPTIONS) as (keyof EffectFilter)[]) {
    const list = only[field];
    if (!list || list.length === 0) continue;
    for (const value of list) {
      if (known[field].includes(value)) continue;
      const option = FILTER_OPTIONS[field];
      const names = known[field].length > 0 ? known[field].join(", ") : "none configured";
      throw new IdemError(
        "INVALID_INPUT",
        `--${option} ${JSON.stringify(value)}: no such ${option === "kind" ? "effect kind" : `${option} in the config`} (${names})`,
        { details: { option, value, known: [...known[field]] } },
      );
    }
    out[field] = [...new Set(list)];
  }
  return Object.keys(out).length === 0 ? null : out;
}

/** The filter in one line, as the plan and `idem show` print it: `kind http.request, target hooks`. */
export function describeFilter(only: EffectFilter | null | undefined): string {
  if (!only) return "every effect";
  const parts: string[] = [];
  for (const field of Object.keys(FILTER_OPTIONS) as (keyof EffectFilter)[]) {
    const list = only[field];
    if (list?.length) parts.push(`${FILTER_OPTIONS[field]} ${list.join("|")}`);
  }
  return parts.length > 0 ? parts.join(", ") : "every effect";
}

/**
 * The reason a replay that creates generations must give, as given (stored so).
 * @throws INVALID_INPUT (details `{ option: "reason" }`) when it is absent or blank.
 */
export function replayReason(reason: string | null | undefined): string {
  if (reason == null || reason.trim() === "") {
    throw new IdemError(
      "INVALID_INPUT",
      "--reason is required for a replay that creates a new generation (a dry run needs none): say why, e.g. --reason 'hooks receiver lost the data'",
      { details: { option: "reason" } },
    );
  }
  return reason;
}
