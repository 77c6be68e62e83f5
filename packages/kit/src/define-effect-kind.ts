import { IdemError, isKindFaultPoint } from "@idem/schema";
import type { z } from "zod";
import type { EffectKind, EffectSpecBase } from "./effect-kind.js";

/** A kind's name: `<namespace>.<name>`, lowercase letters, digits, `_` and `-`, at least one dot. */
export const KIND_NAME_PATTERN = /^[a-z][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$/;

/** Whether `name` is a well-formed kind name (KIND_NAME_PATTERN, 64 characters at most). */
export function isKindName(name: unknown): name is string {
  return typeof name === "string" && name.length <= 64 && KIND_NAME_PATTERN.test(name);
}

/** The zod idem's kinds are built with: its major, and the range the kit depends on. */
export const ZOD_EXPECTED = { major: 4, range: "^4.1.0" } as const;

/**
 * What is wrong with a kind's `spec` or `options` schema as idem reads it, or undefined: not a
 * zod schema at all, or one of zod 3 (it has `_def` and no `_zod`), whose JSON Schema and issues
 * idem cannot read. Pure.
 */
export function zodSchemaProblem(field: "spec" | "options", schema: unknown): string | undefined {
  if (
    typeof schema !== "object" ||
    schema === null ||
    typeof (schema as { safeParse?: unknown }).safeParse !== "function"
  )
    return `${field} must be a zod schema`;
  if (!("_zod" in schema))
    return "_def" in schema
      ? `${field} is a zod 3 schema: idem reads kinds built with zod ${ZOD_EXPECTED.major} (zod@${ZOD_EXPECTED.range}); install zod ${ZOD_EXPECTED.major} beside the kind and import { z } from "zod"`
      : `${field} is not a zod ${ZOD_EXPECTED.major} schema (zod@${ZOD_EXPECTED.range})`;
  return undefined;
}

/** The first problem with a kind's schemas (`spec`, then `options`), or undefined. */
export function kindSchemaProblem(kind: { spec?: unknown; options?: unknown }): string | undefined {
  return (
    zodSchemaProblem("spec", kind.spec) ??
    (kind.options === undefined ? undefined : zodSchemaProblem("options", kind.options))
  );
}

const GUARANTEES = ["exactly-once", "exactly-once-in-effect", "target-dedup", "uncertain-window"];

/**
 * Defines an effect kind: the object itself, its types inferred from `spec` (and `options`,
 * `open`), checked for what idem relies on. idem's built-in kinds are defined with it too.
 * @throws IdemError INVALID_CONFIG naming what is missing or malformed (a name without a dot, no
 * probe or apply, a spec schema that does not parse its own samples' kind).
 */
export function defineEffectKind<S extends EffectSpecBase, O = undefined, R = undefined>(
  kind: { spec: z.ZodType<S>; options?: z.ZodType<O> | undefined } & EffectKind<
    NoInfer<S>,
    NoInfer<O>,
    R
  >,
): EffectKind<S, O, R> {
  const where = `effect kind ${JSON.stringify(kind?.name)}`;
  const bad = (what: string): never => {
    throw new IdemError("INVALID_CONFIG", `${where}: ${what}`);
  };
  if (typeof kind !== "object" || kind === null) bad("is not an object");
  if (!isKindName(kind.name))
    bad("name must be <namespace>.<name> (lowercase letters, digits, _ and -, with a dot)");
  if (typeof kind.description !== "string" || kind.description.trim() === "")
    bad("description must say what the effect does");
  if (!GUARANTEES.includes(kind.guarantee))
    bad(`guarantee must be one of ${GUARANTEES.join(", ")}`);
  const schemas = kindSchemaProblem(kind);
  if (schemas !== undefined) bad(schemas);
  if (typeof kind.probe !== "function") bad("probe must be a function");
  if (typeof kind.apply !== "function") bad("apply must be a function");
  if (
    kind.scan !== undefined &&
    (typeof kind.scan.keys !== "function" || typeof kind.scan.target !== "function")
  )
    bad("scan must have target() and keys()");
  if (kind.faultPoints !== undefined) {
    if (!Array.isArray(kind.faultPoints)) bad("faultPoints must be an array of names");
    const namespace = kind.name.split(".")[0];
    for (const p of kind.faultPoints) {
      if (typeof p !== "string" || !isKindFaultPoint(p) || p.split(".")[0] !== namespace)
        bad(
          `fault point ${JSON.stringify(p)} must be <namespace>.<name> in the kind's namespace (${namespace}.after-create)`,
        );
    }
  }
  if (
    kind.approval !== undefined &&
    (!Array.isArray(kind.approval.facts) ||
      kind.approval.facts.some((f) => typeof f !== "string" || f === "") ||
      typeof kind.approval.factsOf !== "function")
  )
    bad("approval must have facts (names) and factsOf()");
  const other = kind.spec.safeParse({ kind: `${kind.name}.not-this-kind` });
  if (other.success) bad("spec must refuse another kind (kind: z.literal(name))");
  return Object.freeze({ ...kind });
}
