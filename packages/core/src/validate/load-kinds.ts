import {
  builtInKinds,
  type GitKindSettings,
  type KindRegistry,
  kindRegistryOf,
  kindSectionIssues,
  kindSectionNames,
  type LoadKindRegistryOptions,
  loadKindRegistry,
} from "@idem/effects";
import { createJetStreamPublishTransport } from "@idem/nats";
import { type Config, type ConfigResult, type ParseConfigOptions, parseConfig } from "@idem/schema";
import { assertCredentialScopes } from "../access/agent-grant.js";
import { assertApprovalRules } from "../approvals/approval-rules.js";

/**
 * idem's own kinds as its processes run them: nats.publish reaching JetStream through @idem/nats
 * (a transport per host, made by the kind's `open`).
 */
export const IDEM_KINDS = builtInKinds({ publishTransport: createJetStreamPublishTransport });

/**
 * A config file's JSON as idem's processes load it: `parseConfig` of @idem/schema knowing the
 * sections idem's own kinds own, each parsed by its kind (`repos.site.branch` named as any other
 * key). Never throws: every problem is an issue, idem's own and the kinds' sections alike.
 */
export function parseIdemConfig(
  raw: unknown,
  options: Omit<ParseConfigOptions, "sections">,
): ConfigResult {
  const owned = kindSectionNames(IDEM_KINDS);
  const r = parseConfig(raw, { ...options, sections: owned });
  if (r.ok) {
    const issues = kindSectionIssues(r.config, IDEM_KINDS);
    return issues.length > 0 ? { ok: false, issues } : r;
  }
  // idem's own sections refused: the kinds' sections are still checked, so that one reading of the
  // error names every bad key.
  const written = (raw ?? {}) as Record<string, unknown>;
  const sections = Object.fromEntries(
    owned.filter((s) => Object.hasOwn(written, s)).map((s) => [s, written[s]]),
  );
  return {
    ok: false,
    issues: [...r.issues, ...kindSectionIssues({ sections, dir: options.dir }, IDEM_KINDS)],
  };
}

/**
 * The effect kinds a config can use: idem's own and those its `kinds` section adds (each module
 * loaded, its options parsed). Every front end and process loads it once at start and hands it to
 * `checkOutput`/`recordOutput` and `openEffects`, so they all know the same kinds. The scopes of
 * `credentials` are checked against them here.
 * @throws IdemError INVALID_CONFIG naming `kinds.<name>` (see `loadKindRegistry`), the key of a
 *   kind's section, the key of `credentials.<agent>.effects` naming a kind or an alias the
 *   config cannot use, or the key of `approvals.rules` naming what the kinds do not know.
 */
export async function loadKinds(
  config: Config,
  options: LoadKindRegistryOptions = {},
): Promise<KindRegistry> {
  const kinds = await loadKindRegistry(config, IDEM_KINDS, options);
  assertCredentialScopes(config, kinds);
  assertApprovalRules(config, kinds);
  return kinds;
}

/**
 * The kinds `loadKinds` loaded for this config object, else idem's own (a config without `kinds`),
 * built with `git` as the git kinds' settings when given (an embedder's or a test's choice:
 * `{ durable: false }`, a shorter lock wait; idem itself runs the defaults).
 * @throws IdemError INVALID_STATE when the config adds kinds this process has not loaded.
 */
export function kindsOf(config: Config, git?: GitKindSettings): KindRegistry {
  if (git === undefined) return kindRegistryOf(config, IDEM_KINDS);
  return kindRegistryOf(
    config,
    builtInKinds({ publishTransport: createJetStreamPublishTransport, git }),
  );
}
