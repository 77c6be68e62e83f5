import { aliasesOfEffect, type KindRegistry, knownAliasesOf } from "@idem/effects";
import { PLACE_TYPES } from "@idem/kit";
import { type ApprovalRule, type Config, type EffectSpec, IdemError } from "@idem/schema";

/** A rule's name for people: its `name`, else `rule <index>`. */
export const ruleName = (rule: ApprovalRule, i: number): string => rule.name ?? `rule ${i}`;

/** The reason a kind that always needs an approval gives in a request (`rules`). */
export const alwaysRule = (kind: string): string => `kind ${kind} (always)`;

/** A glob as a RegExp: `**` any characters, `*` any but `/`, `?` one but `/`; anchored. */
export function globRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] as string;
    if (ch === "*" && glob[i + 1] === "*") {
      re += ".*";
      i += 1;
    } else if (ch === "*") re += "[^/]*";
    else if (ch === "?") re += "[^/]";
    else re += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "s");
}

/** Whether any of a fact's values matches any of the patterns. */
function factMatches(value: string | readonly string[] | undefined, patterns: string[]): boolean {
  if (value === undefined) return false;
  const values = typeof value === "string" ? [value] : value;
  return patterns.some((p) => {
    const re = globRegExp(p);
    return values.some((v) => re.test(v));
  });
}

/** Whether one rule matches one effect of an output of `agent`. */
export function ruleMatches(
  rule: ApprovalRule,
  spec: EffectSpec,
  agent: string,
  kinds: KindRegistry,
): boolean {
  if (rule.kind && !rule.kind.includes(spec.kind)) return false;
  if (rule.agent && !rule.agent.includes(agent)) return false;
  const places = PLACE_TYPES.filter((t) => rule[t] !== undefined);
  if (places.length > 0) {
    const aliases = aliasesOfEffect(spec, kinds);
    const at = places.every((t) => aliases.some((a) => a.type === t && rule[t]?.includes(a.name)));
    if (!at) return false;
  }
  if (rule.match) {
    const kind = kinds.get(spec.kind);
    const facts = kind?.approval?.factsOf(spec) ?? {};
    for (const [fact, patterns] of Object.entries(rule.match))
      if (!factMatches(facts[fact], patterns)) return false;
  }
  return true;
}

/**
 * Why an effect needs a person's approval: the names of the rules of `approvals.rules` it matches,
 * and its kind's own `approval.always`; empty when it needs none. Pure.
 */
export function approvalReasons(
  spec: EffectSpec,
  agent: string,
  config: Pick<Config, "approvals">,
  kinds: KindRegistry,
): string[] {
  const reasons = config.approvals.rules.flatMap((rule, i) =>
    ruleMatches(rule, spec, agent, kinds) ? [ruleName(rule, i)] : [],
  );
  if (kinds.get(spec.kind)?.approval?.always) reasons.push(alwaysRule(spec.kind));
  return reasons;
}

/**
 * Checks `approvals.rules` against the kinds this config can use, when the config loads: each
 * kind named is registered, each place one a kind knows in this config (`repo`, `root`, `target`),
 * each agent one of `agents` (when the config names any), and each fact of `match` one that every
 * kind the rule names exposes (a rule with `match` must name its kinds). Pure.
 * @throws IdemError INVALID_CONFIG naming the key at fault (`approvals.rules.0.match.base`).
 */
export function assertApprovalRules(config: Config, kinds: KindRegistry): void {
  const bad = (key: string, message: string): never => {
    throw new IdemError("INVALID_CONFIG", `${key}: ${message}`, { details: { key } });
  };
  const places = knownAliasesOf(kinds);
  const agents = Object.keys(config.agents);
  config.approvals.rules.forEach((rule, i) => {
    const at = `approvals.rules.${i}`;
    rule.kind?.forEach((name, k) => {
      if (!kinds.get(name))
        bad(
          `${at}.kind.${k}`,
          `${JSON.stringify(name)} is not a registered kind (registered: ${kinds.names().join(", ")})`,
        );
    });
    for (const t of PLACE_TYPES) {
      const known = places.get(t) ?? [];
      rule[t]?.forEach((name, k) => {
        if (!known.includes(name))
          bad(
            `${at}.${t}.${k}`,
            `${JSON.stringify(name)} is not a ${t} in this config (known: ${known.join(", ") || "none"})`,
          );
      });
    }
    if (agents.length > 0)
      rule.agent?.forEach((name, k) => {
        if (!agents.includes(name))
          bad(`${at}.agent.${k}`, `${JSON.stringify(name)} is not an agent of this config`);
      });
    if (!rule.match) return;
    if (!rule.kind) bad(`${at}.match`, "a rule with match must name its kind (kind)");
    for (const fact of Object.keys(rule.match)) {
      for (const name of rule.kind ?? []) {
        const facts = kinds.get(name)?.approval?.facts ?? [];
        if (!facts.includes(fact))
          bad(
            `${at}.match.${fact}`,
            `${name} exposes no fact ${JSON.stringify(fact)} to approval rules (it exposes: ${facts.join(", ") || "none"})`,
          );
      }
    }
  });
}

/** One line per rule, as `idem doctor` lists them: `prs: kind github.pull_request, base main`. */
export function describeApprovalRules(config: Pick<Config, "approvals">): string[] {
  return config.approvals.rules.map((rule, i) => {
    const parts: string[] = [];
    if (rule.kind) parts.push(`kind ${rule.kind.join("|")}`);
    if (rule.agent) parts.push(`agent ${rule.agent.join("|")}`);
    for (const t of PLACE_TYPES) if (rule[t]) parts.push(`${t} ${rule[t]?.join("|")}`);
    for (const [fact, patterns] of Object.entries(rule.match ?? {}))
      parts.push(`${fact} ${patterns.join("|")}`);
    return `${ruleName(rule, i)}: ${parts.join(", ") || "every effect"}`;
  });
}
