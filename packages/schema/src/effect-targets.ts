import type { Config } from "./config.js";
import type { AgentOutput, EffectSpec } from "./records.js";

/**
 * The ordering targets an output's effects touch: `repo:<alias>@<branch>` for git effects and
 * `root:<alias>` for file writes. Runs that share a target are applied in recording order.
 */
export function effectTargets(output: AgentOutput, config: Config): string[] {
  const set = new Set<string>();
  for (const e of output.effects) {
    const t = effectTarget(e, config);
    if (t !== undefined) set.add(t);
  }
  return [...set].sort();
}

/** The ordering target of one effect, if it has one. */
export function effectTarget(e: EffectSpec, config: Config): string | undefined {
  if (e.kind === "git.commit" || e.kind === "git.patch") {
    return `repo:${e.repo}@${e.branch ?? config.repos[e.repo]?.branch ?? "main"}`;
  }
  if (e.kind === "file.write") return `root:${e.root}`;
  return undefined;
}
