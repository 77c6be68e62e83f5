import type { AnyEffectKind, KindAlias } from "@idem/kit";
import {
  type AgentOutput,
  type Config,
  type EffectSpec,
  IdemError,
  isIdemError,
  issuePath,
  type ValidationIssue,
} from "@idem/schema";
import { BUILT_IN_KINDS } from "../kinds/index.js";
import { type KindRegistry, kindRegistryOf } from "./kind-registry.js";

/**
 * The kind of a spec, or an IdemError naming the registered ones.
 * @throws IdemError INVALID_INPUT (`details.field` = `kind`) for a kind that is not registered.
 */
export function kindOf(registry: KindRegistry, spec: Pick<EffectSpec, "kind">): AnyEffectKind {
  const kind = registry.get(spec.kind);
  if (!kind)
    throw new IdemError("INVALID_INPUT", unregistered(registry, spec.kind), {
      details: { field: "kind" },
    });
  return kind;
}

/** Why a kind cannot be used: its config section missing, or not registered at all. */
function unregistered(registry: KindRegistry, name: string): string {
  const section = registry.sectionMissing(name);
  return section !== undefined
    ? `kind ${JSON.stringify(name)} needs the config's ${section} section (docs/kinds/${section}.md)`
    : `kind ${JSON.stringify(name)} is not registered (registered: ${registry.names().join(", ")})`;
}

/**
 * Every check an output's effects pass before it is recorded, each by its kind: the kind is
 * registered (else the issue names it and the registered ones), the spec parses with the kind's
 * schema (every effect first), then the kind's `check` (aliases configured, sizes, every check of
 * the text its probe and apply would make). Answers the parsed specs, which are what is recorded.
 *
 * Pure and deterministic: no I/O; never throws for a bad spec (a kind's check that throws anything
 * but a validation error is a bug and propagates). Each issue's path is `effects.<i>.<field>`.
 */
export function checkEffects(
  specs: readonly EffectSpec[],
  registry: KindRegistry,
): { ok: true; specs: EffectSpec[] } | { ok: false; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const parsed: { spec: EffectSpec; kind: AnyEffectKind }[] = [];
  specs.forEach((spec, i) => {
    const kind = registry.get(spec.kind);
    if (!kind) {
      issues.push({ path: `effects.${i}.kind`, message: unregistered(registry, spec.kind) });
      return;
    }
    const r = kind.spec.safeParse(spec);
    if (!r.success) {
      for (const z of r.error.issues)
        issues.push({
          path: issuePath(["effects", i, ...(z.path as (string | number)[])]),
          message: z.message,
        });
      return;
    }
    parsed.push({ spec: r.data as EffectSpec, kind });
  });
  if (issues.length > 0) return { ok: false, issues };
  parsed.forEach(({ spec, kind }, i) => {
    const ctx = registry.context(kind.name);
    const at = (field: string) => (field ? `effects.${i}.${field}` : `effects.${i}`);
    try {
      kind.check?.(spec, {
        ...ctx,
        issue: (field, message) => issues.push({ path: at(field), message }),
      });
    } catch (e) {
      if (!isIdemError(e) || (e.class !== "validation" && !isIdemError(e, "SANDBOX_VIOLATION")))
        throw e;
      const field = typeof e.details?.field === "string" ? e.details.field : "";
      const message =
        field && e.message.startsWith(`${field} `) ? e.message.slice(field.length + 1) : e.message;
      issues.push({ path: at(field), message });
    }
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, specs: parsed.map((p) => p.spec) };
}

/**
 * The ordering targets an output's effects touch, sorted and without repeats (each kind's
 * `targets`: `repo:<alias>@<branch>`, `root:<alias>`). Runs that share a target are applied in
 * recording order, so the same outputs replayed give the same history. Pure; a kind that is not
 * registered gives none.
 */
export function effectTargetsOf(
  output: AgentOutput,
  config: Config,
  registry: KindRegistry = kindRegistryOf(config, BUILT_IN_KINDS),
): string[] {
  const set = new Set<string>();
  for (const e of output.effects) for (const t of targetsOfEffect(e, registry)) set.add(t);
  return [...set].sort();
}

/** The ordering targets of one effect (its kind's `targets`), none for an unregistered kind. */
export function targetsOfEffect(spec: EffectSpec, registry: KindRegistry): readonly string[] {
  const kind = registry.get(spec.kind);
  return kind?.targets?.(spec, registry.context(kind.name)) ?? [];
}

/** The places an effect acts on (its kind's `aliases`), by type (`repo`, `root`, `target`). */
export function aliasesOfEffect(spec: EffectSpec, registry: KindRegistry): readonly KindAlias[] {
  return registry.get(spec.kind)?.aliases?.(spec) ?? [];
}

/**
 * What a later recorded effect of the same kind with the same answer supersedes (file.write: the
 * root and path), prefixed with the kind; undefined when nothing does, and for a spec its kind's
 * schema refuses (a damaged recorded output: see `recordedSpecsProblem`), which supersedes nothing.
 */
export function supersedeKeyOf(spec: EffectSpec, registry: KindRegistry): string | undefined {
  const kind = registry.get(spec.kind);
  if (!kind?.supersedeKey || !kind.spec.safeParse(spec).success) return undefined;
  const k = kind.supersedeKey(spec);
  return k === undefined ? undefined : `${spec.kind}\0${k}`;
}

/** What `recordedSpecsProblem` found, and the failure class a run that reaches it ends with. */
export interface RecordedSpecsProblem {
  /** `effects.<i>[.<field>]: <message>`. */
  problem: string;
  /**
   * `integrity`: the spec is not what any check let through (not an object naming its kind, a
   * field missing or of the wrong type: the row was damaged or edited). `validation`: a sound spec
   * whose values its kind refuses today (recorded by an older idem, before the check existed): it
   * can never be applied.
   */
  class: "integrity" | "validation";
}

/** Issue codes that say a spec's shape is broken rather than a value refused. */
const SHAPE_ISSUES = new Set(["invalid_type", "unrecognized_keys", "invalid_union"]);

/**
 * What is wrong with the effects of a recorded output, read back from the journal, by their kinds'
 * schemas: the first spec its kind's schema refuses (see `RecordedSpecsProblem` for the class);
 * undefined when every spec parses. A kind not registered here is not this question (the config
 * changed): its probe refuses it as before. Pure; never throws.
 */
export function recordedSpecsProblem(
  specs: readonly unknown[],
  registry: KindRegistry,
): RecordedSpecsProblem | undefined {
  for (const [i, spec] of specs.entries()) {
    const name = (spec as { kind?: unknown } | null)?.kind;
    if (typeof name !== "string")
      return { problem: `effects.${i}: not an effect naming its kind`, class: "integrity" };
    const kind = registry.get(name);
    if (!kind) continue;
    const r = kind.spec.safeParse(spec);
    if (!r.success) {
      const first = r.error.issues[0];
      const field = issuePath(["effects", i, ...((first?.path ?? []) as (string | number)[])]);
      const shape = r.error.issues.some((issue) => SHAPE_ISSUES.has(issue.code));
      return {
        problem: `${field}: ${first?.message ?? "refused by its kind's schema"}`,
        class: shape ? "integrity" : "validation",
      };
    }
  }
  return undefined;
}

/** One line for listings: the kind's `describe`, else the kind's name. */
export function describeEffect(spec: EffectSpec, registry: KindRegistry): string {
  const kind = registry.get(spec.kind);
  try {
    return kind?.describe?.(spec) ?? spec.kind;
  } catch {
    return spec.kind;
  }
}

/** Every place the registered kinds know in this config, by type (`repo`, `root`, `target`). */
export function knownAliasesOf(registry: KindRegistry): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const kind of registry.kinds) {
    for (const a of knownAliasesOfKind(registry, kind)) {
      const list = out.get(a.type) ?? [];
      if (!list.includes(a.name)) list.push(a.name);
      out.set(a.type, list);
    }
  }
  return out;
}

/**
 * The places one kind knows in this config (its `knownAliases`), none when it cannot say (options
 * it does not expect): a listing still shows the kind.
 */
export function knownAliasesOfKind(
  registry: KindRegistry,
  kind: AnyEffectKind,
): readonly KindAlias[] {
  try {
    return kind.knownAliases?.(registry.context(kind.name)) ?? [];
  } catch {
    return [];
  }
}
