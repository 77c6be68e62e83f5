import { BUILT_IN_KINDS, type KindRegistry, knownAliasesOfKind } from "@idem/effects";
import {
  type AnyEffectKind,
  type KindAlias,
  type KindGuarantee,
  kindJsonSchema,
  showableGuarantee,
} from "@idem/kit";
import type { Config } from "@idem/schema";
import { kindsOf } from "../validate/load-kinds.js";

/** One registered kind as `idem kinds` lists it. */
export interface ListedKind {
  name: string;
  builtIn: boolean;
  /** The module the config loads it from (absolute path or package name); null for idem's own. */
  module: string | null;
  /**
   * What idem states: the declared guarantee, lowered to `uncertain-window` when the kind's own
   * parts show its probe cannot tell for its samples (`showableGuarantee`). Only the drill
   * (`idem kinds test`) confirms it against the target.
   */
  guarantee: KindGuarantee;
  /** The guarantee the kind declares. */
  declared: KindGuarantee;
  description: string;
  /** The aliases it knows in this config (`root: outbox`, `repo: site`), from the kind itself. */
  aliases: KindAlias[];
  /** `always`, or `per-spec` when the kind says for each spec whether its probe can tell (`probeable`). */
  probe: "always" | "per-spec";
  /** Whether it lists the keys present at a target (`scan`: audit, the drill's count). */
  scan: boolean;
  /** Whether it probes many keys in one pass (`probeBatch`: replay plans, audit). */
  batchProbe: boolean;
  /** Whether it supplies samples, so that `idem kinds test` can drill it. */
  samples: boolean;
  /** Its own fault points (`IDEM_FAULT` can name them). */
  faultPoints: string[];
  /** Its spec's JSON Schema (input form), with `withSchemas` only. */
  schema?: Record<string, unknown>;
}

/** What `listKinds` answers: the registered kinds, and idem's own that this config lacks a section for. */
export interface KindListing {
  kinds: ListedKind[];
  /** idem's own kinds not available in this config, each with the config section it needs. */
  unavailable: { name: string; section: string }[];
}

/**
 * The kinds registered for `config` (idem's own, then the config's, as `loadKinds` loaded them),
 * each described by the kind itself; with `withSchemas`, each with the JSON Schema of its spec.
 * Pure but for the kinds' own `knownAliases` (a kind that cannot say lists none).
 * @throws IdemError INVALID_STATE when the config adds kinds this process has not loaded.
 */
export function listKinds(
  config: Config,
  options: { withSchemas?: boolean; registry?: KindRegistry } = {},
): KindListing {
  const registry = options.registry ?? kindsOf(config);
  const kinds = registry.kinds.map((kind) =>
    listedKind(kind, registry, config, options.withSchemas === true),
  );
  const unavailable = BUILT_IN_KINDS.flatMap((k) => {
    const section = registry.sectionMissing(k.name);
    return section === undefined ? [] : [{ name: k.name, section }];
  });
  return { kinds, unavailable };
}

function listedKind(
  kind: AnyEffectKind,
  registry: KindRegistry,
  config: Config,
  withSchema: boolean,
): ListedKind {
  const builtIn = registry.isBuiltIn(kind.name);
  const aliases: KindAlias[] = [...knownAliasesOfKind(registry, kind)];
  return {
    name: kind.name,
    builtIn,
    module: builtIn ? null : (config.kinds[kind.name]?.module ?? null),
    guarantee: showableGuarantee(kind, registry.context(kind.name)),
    declared: kind.guarantee,
    description: kind.description,
    aliases,
    probe: kind.probeable ? "per-spec" : "always",
    scan: kind.scan !== undefined,
    batchProbe: kind.probeBatch !== undefined,
    samples: kind.samples !== undefined,
    faultPoints: [...(kind.faultPoints ?? [])],
    ...(withSchema ? { schema: kindJsonSchema(kind) } : {}),
  };
}
