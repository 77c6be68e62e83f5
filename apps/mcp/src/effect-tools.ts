import { type kindsOf, showableGuarantee } from "@idem/core";
import { IdemError } from "@idem/schema";
import { z } from "zod";

/** The effect kinds of one config, as core's registry answers them (`loadKinds`, `kindsOf`). */
export type KindRegistry = ReturnType<typeof kindsOf>;
type Kind = KindRegistry["kinds"][number];

/** What every tool of the server is described by in `tools/list` (the MCP `Tool`). */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

/** One tool per registered effect kind: its definition and the kind it stages. */
export interface EffectTool extends ToolDefinition {
  kind: string;
}

/** The prefix of every effect tool's name: `effect_git_commit` stages a `git.commit`. */
export const EFFECT_TOOL_PREFIX = "effect_";

/**
 * The tool name of a kind: `effect_` and the kind's name with each dot as `_` (`acme.ticket` is
 * `effect_acme_ticket`). The MCP specification allows dots in tool names, but several clients
 * and model APIs accept only `[A-Za-z0-9_-]`, so the name keeps to those (docs/mcp.md).
 */
export function effectToolName(kind: string): string {
  return `${EFFECT_TOOL_PREFIX}${kind.replaceAll(".", "_")}`;
}

/**
 * What a kind's guarantee means for the agent, in the words of docs/mcp.md, "What is promised"
 * (the kinds' guarantees are @idem/kit's `KindGuarantee`).
 */
const GUARANTEE_TEXT: Record<string, string> = {
  "exactly-once":
    "exactly once: the effect and its key are committed together at the target, so no crash can repeat it",
  "exactly-once-in-effect":
    "exactly once in effect: after any crash idem finds it at the target by its key, so it is never applied twice",
  "target-dedup":
    "once in effect: the target absorbs a repeat under the effect's key (a deduplication key it honours)",
  "uncertain-window":
    "at most once without a person: it is sent once, but if idem crashes between sending it and recording the answer the outcome is unknown, and the effect then waits as uncertain for a person to resolve (it is never sent again on its own)",
};

/** The kind's spec schema as JSON Schema for the tool: `kind` removed (the tool fills it in). */
function inputSchemaOf(kind: Kind): EffectTool["inputSchema"] {
  const schema = z.toJSONSchema(kind.spec, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  const dropKind = (s: Record<string, unknown>): Record<string, unknown> => {
    const out = { ...s };
    if (typeof out.properties === "object" && out.properties !== null) {
      const { kind: _kind, ...rest } = out.properties as Record<string, unknown>;
      out.properties = rest;
    }
    if (Array.isArray(out.required)) out.required = out.required.filter((r) => r !== "kind");
    for (const union of ["anyOf", "oneOf"] as const) {
      const branches = out[union];
      if (Array.isArray(branches))
        out[union] = branches.map((b) =>
          typeof b === "object" && b !== null ? dropKind(b as Record<string, unknown>) : b,
        );
    }
    return out;
  };
  const input = dropKind(schema);
  // An MCP tool's input is an object: a kind whose spec is a union of objects is wrapped so.
  return { ...input, type: "object" };
}

/**
 * The places the config defines for a kind (its `knownAliases`): undefined for a kind that does
 * not say (or cannot), else the list, maybe empty.
 */
function knownAliases(
  kind: Kind,
  registry: KindRegistry,
): readonly { type: string; name: string }[] | undefined {
  try {
    return kind.knownAliases?.(registry.context(kind.name));
  } catch {
    return undefined;
  }
}

/** The places the config defines for a kind, as "root outbox; repo site". */
function configuredAliases(kind: Kind, registry: KindRegistry): string {
  const aliases = knownAliases(kind, registry) ?? [];
  const byType = new Map<string, string[]>();
  for (const a of aliases) byType.set(a.type, [...(byType.get(a.type) ?? []), a.name]);
  return [...byType].map(([type, names]) => `${type} ${names.join(", ")}`).join("; ");
}

/** The description a model reads: what the effect does, what the call does, and what is promised. */
function descriptionOf(kind: Kind, registry: KindRegistry): string {
  const aliases = configuredAliases(kind, registry);
  const guarantee = showableGuarantee(kind, registry.context(kind.name));
  return [
    kind.description,
    `Stages one ${kind.name} effect in this job's draft output and answers its key (<jobId>/<index>); nothing happens at the target now.`,
    `Once the output is recorded (finish, or under the idem executor your exit 0), idem applies it ${GUARANTEE_TEXT[guarantee] ?? guarantee}.`,
    "An invalid effect is refused naming the field: correct it and call again.",
    ...(aliases ? [`Configured here: ${aliases}.`] : []),
  ].join(" ");
}

/**
 * One tool per kind the config can use (built-in and the config's own, in the registry's order):
 * named by {@link effectToolName}, its input the kind's JSON Schema without `kind`, its description
 * the kind's own followed by what staging does and the kind's guarantee. A kind that names the
 * aliases it acts on (`knownAliases`) and has none in this config (`nats.publish` without a
 * `publish` target, `http.request` without an `http.targets` entry) gets no tool: every effect of
 * it would be refused.
 * @throws IdemError INVALID_CONFIG when two kinds would have the same tool name (`a.b_c` and
 * `a_b.c`), naming both.
 */
export function effectToolsOf(registry: KindRegistry): EffectTool[] {
  const seen = new Map<string, string>();
  const usable = registry.kinds.filter((k) => knownAliases(k, registry)?.length !== 0);
  return usable.map((kind) => {
    const name = effectToolName(kind.name);
    const other = seen.get(name);
    if (other !== undefined)
      throw new IdemError(
        "INVALID_CONFIG",
        `kinds.${kind.name}: its MCP tool name ${name} is also ${other}'s; rename one of the two kinds`,
        { details: { key: `kinds.${kind.name}` } },
      );
    seen.set(name, kind.name);
    return {
      name,
      kind: kind.name,
      title: `Stage a ${kind.name} effect`,
      description: descriptionOf(kind, registry),
      inputSchema: inputSchemaOf(kind),
      // Staging changes nothing at the target; the recorded output will.
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
    };
  });
}
