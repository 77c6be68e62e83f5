import { checkEffects, type KindRegistry } from "@idem/effects";
import { type AgentOutput, type Config, type Validated, validateOutput } from "@idem/schema";
import { kindsOf } from "./load-kinds.js";

/**
 * Whether an output may be recorded: `validateOutput` (its JSON shape, the envelope, the limits),
 * then each effect by its kind (`checkEffects`): the kind registered, the spec parsed by its
 * schema, then its checks (aliases configured, branches allowed, sizes, every check its probe and
 * apply make on the spec's text alone: commit messages, paths by git's rules, a git.patch parsed by
 * the applier's own reader, http paths, publish subjects, reserved headers).
 *
 * The one gate before the record, for every surface (HTTP, NATS submit, `idem submit`, the
 * executor after an agent run, the MCP server): what passes cannot fail at interpretation for a
 * reason the output alone decides. Answers the output with each effect as its kind parsed it (what
 * is recorded). Pure and deterministic: no I/O, writes nothing, never throws; every issue names its
 * field path (`effects.0.patch`).
 *
 * `kinds` defaults to idem's own (`loadKinds` loads a config's `kinds` too).
 */
export function checkRecordable(
  raw: unknown,
  config: Config,
  kinds: KindRegistry = kindsOf(config),
): Validated<AgentOutput> {
  const v = validateOutput(raw, config);
  if (!v.ok) return v;
  const checked = checkEffects(v.value.effects, kinds);
  if (!checked.ok) return checked;
  return { ok: true, value: { ...v.value, effects: checked.specs } };
}
