import { aliasesOfEffect, type KindRegistry, knownAliasesOf, targetsOfEffect } from "@idem/effects";
import type { RunRecord } from "@idem/journal";
import { PLACE_TYPES, type PlaceType } from "@idem/kit";
import { type EffectSpec, IdemError } from "@idem/schema";

/**
 * Which effects of the selected outputs a replay takes (`--kind`, and one option per place type
 * the kinds call their places by: `--repo`, `--root`, `--target`, see PLACE_TYPES of @idem/kit).
 * An effect is in the filter when its kind is one of `kinds` (or `kinds` is absent) and a place it
 * acts on (its kind's `aliases`) is in the list of its type, or no place list is given: `--kind`
 * narrows, the places add up. Names are config aliases. The run record carries it
 * (`RunRecord.only`), so every interpreter honours it.
 */
export type EffectFilter = NonNullable<RunRecord["only"]>;

/** The filter field of a place type: its plural (a place type `t` is `--t`, stored as `ts`). */
type PlaceField = `${PlaceType}s`;
const fieldOf = (type: PlaceType): PlaceField => `${type}s`;

/** Who made a replayed generation, why, of what, and which generation it replays (`RunRecord.replay`). */
export type ReplayLineage = NonNullable<RunRecord["replay"]>;

/** The replay option each filter field comes from, as errors name it. */
export const FILTER_OPTIONS = {
  kinds: "kind",
  ...(Object.fromEntries(PLACE_TYPES.map((t) => [fieldOf(t), t])) as Record<PlaceField, PlaceType>),
} as const satisfies Record<keyof EffectFilter, string>;

/** Whether one effect is in the filter; null or undefined: every effect is. */
export function effectInFilter(
  spec: EffectSpec,
  only: EffectFilter | null | undefined,
  kinds: KindRegistry,
): boolean {
  if (!only) return true;
  if (only.kinds?.length && !only.kinds.includes(spec.kind)) return false;
  if (!PLACE_TYPES.some((t) => only[fieldOf(t)]?.length)) return true;
  return aliasesOfEffect(spec, kinds).some(
    (a) => PLACE_TYPES.includes(a.type) && (only[fieldOf(a.type)]?.includes(a.name) ?? false),
  );
}

/** The ordering targets of the effects in the filter, sorted (as `effectTargetsOf` gives them). */
export function targetsInFilter(
  specs: readonly EffectSpec[],
  only: EffectFilter,
  kinds: KindRegistry,
): string[] {
  const set = new Set<string>();
  for (const spec of specs) {
    if (!effectInFilter(spec, only, kinds)) continue;
    for (const t of targetsOfEffect(spec, kinds)) set.add(t);
  }
  return [...set].sort();
}

/**
 * What a filter may name in this config: every registered kind, and by place type every place
 * the kinds know (`repo: ["site"]`).
 */
export function filterChoices(
  kinds: KindRegistry,
): { kind: string[] } & Record<PlaceType, string[]> {
  const aliases = knownAliasesOf(kinds);
  return {
    kind: kinds.names(),
    ...(Object.fromEntries(PLACE_TYPES.map((t) => [t, aliases.get(t) ?? []])) as Record<
      PlaceType,
      string[]
    >),
  };
}

/**
 * A filter checked against the config, with its empty lists dropped; null when nothing is left
 * (every effect). What can never match is refused before anything is read or recorded.
 * @throws INVALID_INPUT naming the option (`--kind`, `--repo`, `--root`, `--target`) and the
 *   unknown name, with `details: { option, value, known }`: a kind that is not registered, or a
 *   place no registered kind knows in the config.
 */
export function checkEffectFilter(
  only: EffectFilter | null | undefined,
  kinds: KindRegistry,
): EffectFilter | null {
  if (!only) return null;
  const choices = filterChoices(kinds);
  const known = Object.fromEntries(
    Object.entries(FILTER_OPTIONS).map(([field, option]) => [field, choices[option]]),
  ) as unknown as Record<keyof EffectFilter, readonly string[]>;
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
