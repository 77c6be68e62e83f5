import { createRequire } from "node:module";
import { isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type AnyEffectKind,
  type HostNats,
  isKindName,
  type KindContext,
  type KindLimits,
  kindContextOf,
  kindSchemaProblem,
  parseKindOptions,
  safeParseKindOptions,
} from "@idem/kit";
import { type Config, type ConfigIssue, IdemError, natsServers } from "@idem/schema";
import { prepareKindImport } from "./kind-imports.js";

/**
 * The effect kinds one config can use: idem's built-in kinds and the ones its `kinds` section adds,
 * each with its parsed options. Every part of idem that knows something about a kind asks it here.
 */
export interface KindRegistry {
  /** Every registered kind: the built-in ones first, then the config's, in the config's order. */
  readonly kinds: readonly AnyEffectKind[];
  /** The kind of that name, or undefined (own names only: `constructor` is no kind). */
  get(name: string): AnyEffectKind | undefined;
  /**
   * The kind's options parsed by its schema (and resolved): `kinds.<name>.options`, or the config
   * section of one of idem's own kinds.
   */
  options(name: string): unknown;
  /** What the kind's pure parts see: its options, the config's limits, idem's NATS servers. */
  context(name: string): KindContext<unknown>;
  /**
   * Where the kind's options are in the config (`repos`, `kinds.acme.ticket.options`) and what is
   * written there, for a host that opens the kind (`openKind` parses them as the registry did).
   */
  source(name: string): { at: string; raw: unknown } | undefined;
  /** The config's folder, the config's limits and idem's NATS servers: what every kind is told. */
  readonly dir: string;
  readonly limits: KindLimits;
  readonly nats: HostNats | undefined;
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
  const load =
    options.importModule ??
    ((s: string) => {
      prepareKindImport();
      return import(s);
    });
  const builtInNames = new Set(builtIns.map((k) => k.name));
  const added: Entry[] = [];
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
    const schemas = kindSchemaProblem(k);
    if (schemas !== undefined) bad(`${JSON.stringify(entry.module)}: ${schemas}`);
    const source = { at: `${at}.options`, raw: entry.options };
    const parsed = safeParseKindOptions(k, source.raw, { at: source.at, dir: config.dir });
    if (!parsed.ok) {
      const [first] = parsed.issues;
      throw new IdemError(
        "INVALID_CONFIG",
        parsed.issues.map((i) => `${i.key}: ${i.message}`).join("; "),
        { details: { key: first?.key ?? source.at, issues: parsed.issues } },
      );
    }
    added.push({ kind: k, options: parsed.options, source, builtIn: false });
  }
  const r = registry(config, builtIns, added);
  loaded.set(config, r);
  return r;
}

/** One registered kind: its options parsed, and where they come from. */
interface Entry {
  kind: AnyEffectKind;
  options: unknown;
  source: { at: string; raw: unknown };
  builtIn: boolean;
}

/** The config's facts every kind is told: its limits, and idem's NATS servers when it has them. */
function hostFacts(config: Config): { limits: KindLimits; nats: HostNats | undefined } {
  const nats = config.nats && {
    servers: natsServers(config.nats),
    subjectPrefix: config.nats.subjectPrefix,
    replicas: config.nats.replicas,
  };
  return { limits: { maxFileBytes: config.limits.maxFileBytes }, nats };
}

/** The names of the config sections idem's own kinds own, each once (`repos`, `github`, ...). */
export function kindSectionNames(builtIns: readonly AnyEffectKind[]): string[] {
  return [...new Set(builtIns.flatMap((k) => (k.configSection ? [k.configSection] : [])))];
}

/**
 * The built-in kinds' entries for `config`: each kind with a config section takes its options
 * from it (a kind whose section is missing and not optional is unavailable); a section no
 * built-in kind owns is refused.
 * @throws IdemError INVALID_CONFIG naming the section's key of the first problem.
 */
function builtInEntries(
  config: Config,
  builtIns: readonly AnyEffectKind[],
): { entries: Entry[]; unconfigured: Map<string, string> } {
  const owned = kindSectionNames(builtIns);
  for (const section of Object.keys(config.sections)) {
    if (!owned.includes(section))
      throw new IdemError("INVALID_CONFIG", `Unrecognized key: ${JSON.stringify(section)}`, {
        details: { key: section },
      });
  }
  const entries: Entry[] = [];
  const unconfigured = new Map<string, string>();
  for (const kind of builtIns) {
    const at = kind.configSection;
    if (at === undefined) {
      entries.push({ kind, options: undefined, source: { at: "", raw: undefined }, builtIn: true });
      continue;
    }
    const raw = Object.hasOwn(config.sections, at) ? config.sections[at] : undefined;
    if (raw === undefined && kind.configSectionOptional !== true) {
      unconfigured.set(kind.name, at);
      continue;
    }
    const options = parseKindOptions(kind, raw, { at, dir: config.dir });
    entries.push({ kind, options, source: { at, raw }, builtIn: true });
  }
  return { entries, unconfigured };
}

/**
 * Every problem with the sections of `config` that idem's own kinds own (each parsed by its
 * kind, as the registry will), and every top-level key no kind owns: the issues a config loader
 * reports with its own. Never throws for a bad section.
 */
export function kindSectionIssues(
  config: Pick<Config, "sections" | "dir">,
  builtIns: readonly AnyEffectKind[],
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const owned = kindSectionNames(builtIns);
  const unknown = Object.keys(config.sections).filter((s) => !owned.includes(s));
  if (unknown.length > 0)
    issues.push({
      path: "",
      message: `Unrecognized key${unknown.length > 1 ? "s" : ""}: ${unknown.map((k) => JSON.stringify(k)).join(", ")}`,
    });
  for (const at of owned) {
    const kind = builtIns.find((k) => k.configSection === at) as AnyEffectKind;
    if (!Object.hasOwn(config.sections, at)) continue;
    const r = safeParseKindOptions(kind, config.sections[at], { at, dir: config.dir });
    if (!r.ok) for (const i of r.issues) issues.push({ path: i.key, message: i.message });
  }
  return issues;
}

function registry(
  config: Config,
  builtIns: readonly AnyEffectKind[],
  added: readonly Entry[],
): KindRegistry {
  const byName = new Map<string, Entry>();
  const { entries, unconfigured } = builtInEntries(config, builtIns);
  for (const e of entries) byName.set(e.kind.name, e);
  for (const a of added) byName.set(a.kind.name, a);
  const kinds = [...byName.values()].map((e) => e.kind);
  const facts = hostFacts(config);
  const contexts = new Map<string, KindContext<unknown>>();
  return {
    kinds,
    get: (name) => (typeof name === "string" ? byName.get(name)?.kind : undefined),
    options: (name) => byName.get(name)?.options,
    context(name) {
      let c = contexts.get(name);
      if (!c) {
        c = kindContextOf(byName.get(name)?.options, facts);
        contexts.set(name, c);
      }
      return c;
    },
    source: (name) => byName.get(name)?.source,
    dir: config.dir,
    limits: facts.limits,
    nats: facts.nats,
    isBuiltIn: (name) => byName.get(name)?.builtIn === true,
    names: () => kinds.map((k) => k.name),
    sectionMissing: (name) => unconfigured.get(name),
  };
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
