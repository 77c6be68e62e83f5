import { z } from "zod";
import type { AnyEffectKind } from "./effect-kind.js";

/**
 * The JSON Schema (draft 2020-12) of a kind's spec in its input form (what an agent sends:
 * defaults and optional fields not required), as docs/schemas and the OpenAPI document state each
 * kind: `idem kinds --json` lists it. Checks JSON Schema cannot state (the kind's `check`, zod
 * refinements) are left out; a part zod cannot represent (a transform) is stated as any value
 * rather than failing the listing. Pure.
 */
export function kindJsonSchema(kind: AnyEffectKind): Record<string, unknown> {
  const generated = z.toJSONSchema(kind.spec, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return { $schema, title: kind.name, description: kind.description, ...rest };
}
