import { createRequire } from "node:module";
import { isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";
import { type AnyEffectKind, isKindName } from "@idem/kit";
import { type Config, IdemError, issuePath } from "@idem/schema";

/**
 * The effect kinds one config can use: idem's built-in kinds and the ones its `kinds` section adds,
 * each with its parsed options. Every part of idem that knows something about a kind asks it here.
 */
export interface KindRegistry {
  /** Every registered kind: the built-in ones first, then the config's, in the config's order. */
  readonly kinds: readonly AnyEffectKind[];
  /** The kind of that name, or undefined (own names only: `constructor` is no kind). */
  get(name: string): AnyEffectKind | undefined;
  /** The options `kinds.<name>.options` parsed by the kind's schema (undefined for a built-in). */
  options(name: string): unknown;
  /** Whether the kind is one of idem's own. */
  isBuiltIn(name: string): boolean;
  /** The registered names, in order. */
  names(): string[];
  /**
   * For one of idem's own kinds that is not available because the config lacks its section
   * (`github` for the GitHub kinds): that section's name.
   */
  sectionMissing(name: string): string | undefined;
}

/** How `loadKindRegistry` finds modules; tests pass their own import. */
export interface LoadKindRegistryOptions {
  /** Imports a module by URL or package name (default: the dynamic `import`). */
  importModule?: (specifier: string) => Promise<unknown>;
}

/** The registry `loadKindRegistry` loaded for each config object, for `kindRegistryOf`. */
const loaded = new WeakMap<Config, KindRegistry>();

/**
 * The kinds of a config at once: the registry `loadKindRegistry` loaded for this config object,
 * else `builtIns` alone (what a config without a `kinds` section uses).
 * @throws IdemError INVALID_STATE when `config.kinds` names a kind that was not loaded yet (a
 * process loads its kinds once at start, with `loadKindRegistry`).
 */
export function kindRegistryOf(config: Config, builtIns: readonly AnyEffectKind[]): KindRegistry {
  const done = loaded.get(config);
  if (done) return done;
  const names = Object.keys(config.kinds ?? {});
  if (names.length > 0) {
    throw new IdemError(
      "INVALID_STATE",
      `kinds.${names[0]}: the config adds effect kinds, which this process has not loaded (loadKinds)`,
    );
  }
  return registry(config, builtIns, []);
}

/**
 * Loads the kinds the config adds (`kinds.<name>: { module, options }`) beside `builtIns`: each
 * module's default export (or its export named like the kind) must be a kind of that name made
 * with `defineEffectKind`; its options are parsed by the kind's `options` schema. A user kind never
 * shadows a built-in one. Loads each module once per call; runs no kind's `open`. The registry is
 * kept for the config object: `kindRegistryOf(config)` answers it from then on.
 * @throws IdemError INVALID_CONFIG naming `kinds.<name>` (or the option's path) for a module that
 * cannot be loaded, exports no such kind, a name taken by a built-in kind, or options its schema
 * refuses.
 */
export async function loadKindRegistry(
  config: Config,
  builtIns: readonly AnyEffectKind[],
  options: LoadKindRegistryOptions = {},
): Promise<KindRegistry> {
  const load = options.importModule ?? ((s: string) => import(s));
  const builtInNames = new Set(builtIns.map((k) => k.name));
  const added: { kind: AnyEffectKind; options: unknown }[] = [];
  for (const [name, entry] of Object.entries(config.kinds ?? {})) {
    const at = `kinds.${name}`;
    const bad = (message: string, cause?: unknown): never => {
      throw new IdemError("INVALID_CONFIG", `${at}: ${message}`, {
        ...(cause === undefined ? {} : { cause }),
        details: { key: at },
      });
    };
    if (!isKindName(name)) bad("is not <namespace>.<name>");
    if (builtInNames.has(name))
      bad(`${name} is one of idem's own kinds; name yours in a namespace of your own`);
    let mod: unknown;
    try {
      mod = await load(moduleSpecifier(entry.module, config.dir));
    } catch (e) {
      bad(`cannot load ${JSON.stringify(entry.module)}: ${(e as Error).message}`, e);
    }
    const kind = exportedKind(mod, name);
    if (!kind) {
      bad(
        `${JSON.stringify(entry.module)} exports no effect kind named ${name} (export default defineEffectKind({ name: "${name}", ... }))`,
      );
    }
    const k = kind as AnyEffectKind;
    const parsedOptions = parseOptions(k, entry.options, `${at}.options`);
    added.push({ kind: k, options: parsedOptions });
  }
  const r = registry(config, builtIns, added);
  loaded.set(config, r);
  return r;
}

function registry(
  config: Config,
  builtIns: readonly AnyEffectKind[],
  added: readonly { kind: AnyEffectKind; options: unknown }[],
): KindRegistry {
  const byName = new Map<string, { kind: AnyEffectKind; options: unknown; builtIn: boolean }>();
  const unconfigured = new Map<string, string>();
  for (const k of builtIns) {
    if (k.configSection === undefined) {
      byName.set(k.name, { kind: k, options: undefined, builtIn: true });
      continue;
    }
    // A kind whose options are a config section of its own is there only with that section.
    const section = (config as unknown as Record<string, unknown>)[k.configSection];
    if (section === undefined) unconfigured.set(k.name, k.configSection);
    else
      byName.set(k.name, {
        kind: k,
        options: parseOptions(k, section, k.configSection),
        builtIn: true,
      });
  }
  for (const a of added) byName.set(a.kind.name, { ...a, builtIn: false });
  const kinds = [...byName.values()].map((e) => e.kind);
  return {
    kinds,
    get: (name) => (typeof name === "string" ? byName.get(name)?.kind : undefined),
    options: (name) => byName.get(name)?.options,
    isBuiltIn: (name) => byName.get(name)?.builtIn === true,
    names: () => kinds.map((k) => k.name),
    sectionMissing: (name) => unconfigured.get(name),
  };
}

/**
 * A kind's options parsed by its schema.
 * @throws IdemError INVALID_CONFIG naming `<at>.<path>` of the first problem.
 */
function parseOptions(kind: AnyEffectKind, raw: unknown, at: string): unknown {
  if (!kind.options) return raw;
  const r = kind.options.safeParse(raw ?? {});
  if (r.success) return r.data;
  const first = r.error.issues[0];
  const path = issuePath([...(first?.path ?? [])] as (string | number)[]);
  const key = `${at}${path ? `.${path}` : ""}`;
  throw new IdemError("INVALID_CONFIG", `${key}: ${first?.message ?? "is invalid"}`, {
    details: { key },
  });
}

/** A module path of the config (absolute once parsed) as a file URL; a package name as it is, resolved from the config's folder. */
function moduleSpecifier(module: string, dir: string): string {
  if (isAbsolute(module)) return pathToFileURL(module).href;
  try {
    return pathToFileURL(createRequire(join(dir, "idem.config.json")).resolve(module)).href;
  } catch {
    return module;
  }
}

/** The kind a module exports under `name`: its default export, or an export whose kind has that name. */
function exportedKind(mod: unknown, name: string): AnyEffectKind | undefined {
  if (typeof mod !== "object" || mod === null) return undefined;
  const candidates = [
    (mod as { default?: unknown }).default,
    ...Object.values(mod as Record<string, unknown>),
  ];
  return candidates.find(
    (c): c is AnyEffectKind =>
      typeof c === "object" &&
      c !== null &&
      (c as { name?: unknown }).name === name &&
      typeof (c as { probe?: unknown }).probe === "function" &&
      typeof (c as { apply?: unknown }).apply === "function",
  );
}
