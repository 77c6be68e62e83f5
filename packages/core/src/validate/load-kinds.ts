import {
  BUILT_IN_KINDS,
  type KindRegistry,
  kindRegistryOf,
  type LoadKindRegistryOptions,
  loadKindRegistry,
} from "@idem/effects";
import type { Config } from "@idem/schema";

/**
 * The effect kinds a config can use: idem's own and those its `kinds` section adds (each module
 * loaded, its options parsed). Every front end and process loads it once at start and hands it to
 * `checkOutput`/`recordOutput` and `openEffects`, so they all know the same kinds.
 * @throws IdemError INVALID_CONFIG naming `kinds.<name>` (see `loadKindRegistry`).
 */
export function loadKinds(
  config: Config,
  options: LoadKindRegistryOptions = {},
): Promise<KindRegistry> {
  return loadKindRegistry(config, BUILT_IN_KINDS, options);
}

/**
 * The kinds `loadKinds` loaded for this config object, else idem's own (a config without `kinds`).
 * @throws IdemError INVALID_STATE when the config adds kinds this process has not loaded.
 */
export function kindsOf(config: Config): KindRegistry {
  return kindRegistryOf(config, BUILT_IN_KINDS);
}
