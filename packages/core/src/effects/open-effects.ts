import { type CreateEffectsOptions, createEffects, type Effects } from "@idem/effects";
import type { Config } from "@idem/schema";
import { kindsOf } from "../validate/load-kinds.js";

/** Options of `openEffects`: those of `createEffects`. */
export type OpenEffectsOptions = CreateEffectsOptions;

/**
 * The effect kinds of `config` (`loadKinds`: idem's own, nats.publish reaching JetStream through
 * @idem/nats, and the config's) behind the interface the interpreter calls: what every front end
 * and process uses to probe and apply effects. Opens nothing until first use (git processes,
 * repo locks and NATS connections are started lazily, each by its kind).
 *
 * `close()` closes every kind opened (ends the long-lived git processes, drains the NATS
 * connections); call it once when done. Probe and apply semantics, replay and failure codes are
 * those of `Effects`.
 */
export function openEffects(config: Config, options: OpenEffectsOptions = {}): Effects {
  return createEffects(config, { ...options, kinds: options.kinds ?? kindsOf(config) });
}
