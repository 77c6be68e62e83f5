import {
  BUILT_IN_KINDS,
  type KindRegistry,
  kindRegistryOf,
  type LoadKindRegistryOptions,
  loadKindRegistry,
} from "@idem/effects";
import type { Config } from "@idem/schema";
import { assertCredentialScopes } from "../access/agent-grant.js";

/**
 * The effect kinds a config can use: idem's own and those its `kinds` section adds (each module
 * loaded, its options parsed). Every front end and process loads it once at start and hands it to
 * `checkOutput`/`recordOutput` and `openEffects`, so they all know the same kinds. The scopes of
 * `credentials` are checked against them here.
 * @throws IdemError INVALID_CONFIG naming `kinds.<name>` (see `loadKindRegistry`), or the key of
 * `credentials.<agent>.effects` naming a kind or an alias the config cannot use.
 */
export async function loadKinds(
  config: Config,
  options: LoadKindRegistryOptions = {},
): Promise<KindRegistry> {
  const kinds = await loadKindRegistry(config, BUILT_IN_KINDS, options);
  assertCredentialScopes(config, kinds);
  return kinds;
}

/**
 * The kinds `loadKinds` loaded for this config object, else idem's own (a config without `kinds`).
 * @throws IdemError INVALID_STATE when the config adds kinds this process has not loaded.
 */
export function kindsOf(config: Config): KindRegistry {
  return kindRegistryOf(config, BUILT_IN_KINDS);
}
