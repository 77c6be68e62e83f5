import { aliasOf } from "./alias-of.js";
import type { Config } from "./config.js";
import type { AgentOutput, EffectSpec } from "./records.js";

/**
 * The ordering targets an output's effects touch, sorted and without repeats.
 *
 * `repo:<alias>@<branch>` for git effects (the configured branch when none is given) and
 * `root:<alias>` for file writes.
 *
 * Runs that share a target are applied in recording order, so the same outputs replayed give the
 * same history. Pure; an alias missing from the config still gives a target (branch `main`).
 */
export function effectTargets(output: AgentOutput, config: Config): string[] {
  const set = new Set<string>();
  for (const e of output.effects) {
    const t = effectTarget(e, config);
    if (t !== undefined) set.add(t);
  }
  return [...set].sort();
}

/**
 * The ordering target of one effect, or undefined for kinds applied in any order (publish, http).
 */
export function effectTarget(e: EffectSpec, config: Config): string | undefined {
  if (e.kind === "git.commit" || e.kind === "git.patch") {
    return `repo:${e.repo}@${e.branch ?? aliasOf(config.repos, e.repo)?.branch ?? "main"}`;
  }
  if (e.kind === "file.write") return `root:${e.root}`;
  return undefined;
}
