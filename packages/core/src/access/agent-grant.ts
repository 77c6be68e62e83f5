import { aliasesOfEffect, BUILT_IN_KINDS, type KindRegistry, kindRegistryOf } from "@idem/effects";
import {
  type AgentOutput,
  type AgentScope,
  type Config,
  IdemError,
  type ValidationIssue,
} from "@idem/schema";

/**
 * What one agent's credential may record (`credentials.<agent>` of the config): outputs in that
 * agent's name, for jobs enqueued for it, whose effects are of the kinds its scope names and name
 * only the aliases listed there for each (`"*"`: every alias of that kind).
 */
export interface AgentGrant {
  readonly agent: string;
  readonly effects: AgentScope;
}

/** The grant of `credentials.<agent>`, or undefined when the config gives that agent none. */
export function grantOf(config: Config, agent: string): AgentGrant | undefined {
  const entry = Object.hasOwn(config.credentials, agent) ? config.credentials[agent] : undefined;
  return entry ? { agent, effects: entry.effects } : undefined;
}

/** Where a grant's scope lives in the config, for messages. */
const scopeKey = (grant: AgentGrant) => `credentials.${grant.agent}.effects`;

/**
 * Why `grant` may not record `output`'s effects: a kind its scope does not name, or an alias (the
 * kind's own `aliases` of the spec: a repo, a root, a target) outside the list for that kind. Each
 * issue names the effect's field (`effects.2.kind`, `effects.0.repo`). Pure; the output has passed
 * `checkOutput` (every kind registered).
 */
export function scopeIssues(
  output: AgentOutput,
  grant: AgentGrant,
  kinds: KindRegistry,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  output.effects.forEach((spec, i) => {
    const allowed = Object.hasOwn(grant.effects, spec.kind) ? grant.effects[spec.kind] : undefined;
    if (allowed === undefined) {
      issues.push({
        path: `effects.${i}.kind`,
        message: `agent ${grant.agent}'s credential may not record ${spec.kind} effects (${scopeKey(grant)} names ${Object.keys(grant.effects).join(", ") || "no kind"})`,
      });
      return;
    }
    if (allowed === "*") return;
    for (const alias of aliasesOfEffect(spec, kinds)) {
      if (allowed.includes(alias.name)) continue;
      const field = fieldNaming(spec as unknown as Record<string, unknown>, alias);
      issues.push({
        path: field ? `effects.${i}.${field}` : `effects.${i}`,
        message: `${alias.type} ${JSON.stringify(alias.name)} is outside agent ${grant.agent}'s scope for ${spec.kind} (${scopeKey(grant)}.${spec.kind}: ${allowed.join(", ") || "none"})`,
      });
    }
  });
  return issues;
}

/**
 * The spec's field that holds an alias: the one named as the alias's type (`repo`, `root`,
 * `target`), else the first whose value is the alias (`channel` for a `slack` alias); none when
 * the kind builds it from several.
 */
function fieldNaming(
  spec: Record<string, unknown>,
  alias: { type: string; name: string },
): string | undefined {
  if (Object.hasOwn(spec, alias.type) && spec[alias.type] === alias.name) return alias.type;
  return Object.keys(spec).find((k) => k !== "kind" && spec[k] === alias.name);
}

/**
 * Checks every `credentials.<agent>.effects` against the kinds the config can use: each kind named
 * is registered (and has its config section), and each alias listed is one the kind knows in this
 * config (its `knownAliases`; a kind that declares none takes any name). Run once the kinds are
 * loaded (`loadKinds`). Pure.
 * @throws IdemError INVALID_CONFIG naming the key at fault (`credentials.ci.effects.git.commit.0`).
 */
export function assertCredentialScopes(
  config: Config,
  kinds: KindRegistry = kindRegistryOf(config, BUILT_IN_KINDS),
): void {
  const bad = (key: string, message: string): never => {
    throw new IdemError("INVALID_CONFIG", `${key}: ${message}`, { details: { key } });
  };
  for (const [agent, entry] of Object.entries(config.credentials)) {
    for (const [name, allowed] of Object.entries(entry.effects)) {
      const key = `credentials.${agent}.effects.${name}`;
      const kind = kinds.get(name);
      if (!kind) {
        const section = kinds.sectionMissing(name);
        bad(
          key,
          section !== undefined
            ? `${name} needs the config's ${section} section`
            : `${name} is not a registered kind (registered: ${kinds.names().join(", ")})`,
        );
      }
      if (allowed === "*" || !kind?.knownAliases) continue;
      const known = kind.knownAliases({ config, options: kinds.options(name) }).map((a) => a.name);
      allowed.forEach((alias, i) => {
        if (!known.includes(alias))
          bad(
            `${key}.${i}`,
            `${JSON.stringify(alias)} is not an alias ${name} can name in this config (known: ${known.join(", ") || "none"})`,
          );
      });
    }
  }
}
