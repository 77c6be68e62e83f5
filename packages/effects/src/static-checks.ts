import type { Config, EffectSpec, ValidationIssue } from "@idem/schema";
import { BUILT_IN_KINDS } from "./kinds/index.js";
import { checkEffects } from "./registry/check-effects.js";
import { type KindRegistry, kindRegistryOf } from "./registry/kind-registry.js";

/**
 * The checks of an output's effects by their kinds before it is recorded (see `checkEffects`),
 * answering only the issues: with idem's own kinds unless `registry` is given.
 */
export function staticEffectIssues(
  specs: readonly EffectSpec[],
  config: Config,
  registry: KindRegistry = kindRegistryOf(config, BUILT_IN_KINDS),
): ValidationIssue[] {
  const r = checkEffects(specs, registry);
  return r.ok ? [] : r.issues;
}
