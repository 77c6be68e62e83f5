import { staticEffectIssues } from "@idem/effects";
import { type AgentOutput, type Config, type Validated, validateOutput } from "@idem/schema";

/**
 * Whether an output may be recorded: `validateOutput` (schema, aliases, branches, limits), then
 * every check an effect's probe and apply make on the spec's text alone (commit messages, paths of
 * git.commit and file.write, a git.patch parsed by the applier's own reader: traversal, `.git`,
 * absolute paths, symlinks, submodules, binary hunks, escaping renames or copies, text that is not
 * a patch; http paths, publish subjects, reserved headers).
 *
 * The one gate before the record, for every surface (HTTP, NATS submit, `idem submit`, the
 * executor after an agent run): what passes cannot fail at interpretation for a reason the output
 * alone decides. Pure and deterministic: no I/O, writes nothing, never throws; every issue names
 * its field path (`effects.0.patch`). An effect without paths or a patch costs only the schema.
 */
export function checkRecordable(raw: unknown, config: Config): Validated<AgentOutput> {
  const v = validateOutput(raw, config);
  if (!v.ok) return v;
  const issues = staticEffectIssues(v.value.effects, config);
  return issues.length > 0 ? { ok: false, issues } : v;
}
