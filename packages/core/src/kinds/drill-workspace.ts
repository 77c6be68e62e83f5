import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KindRegistry } from "@idem/effects";
import { type JournalStore, openJournalStore } from "@idem/journal";
import { type Config, IdemError, parseConfig } from "@idem/schema";
import { loadKinds } from "../validate/load-kinds.js";
import { resolveKindModule } from "./kind-module.js";

/** The kind the drill registers in its workspace: a module of the operator's, or one of idem's own. */
export interface DrilledKindEntry {
  name: string;
  /** Its module (absolute path or package name); null for one of idem's own kinds. */
  module: string | null;
  /** Its options as `kinds.<name>.options` would give them (a module's kind only). */
  options?: unknown;
}

/** A temporary workspace: a config with the kind registered and a journal of its own. */
export interface DrillWorkspace {
  readonly dir: string;
  readonly configFile: string;
  readonly config: Config;
  readonly registry: KindRegistry;
  readonly journal: JournalStore;
  /** Closes the journal and, unless kept, removes the folder. */
  close(keep: boolean): Promise<void>;
}

/** The drill's interpreter settings: short leases, quick retries, no run dead for its kills. */
const DRILL_INTERPRETER = {
  leaseMs: 1000,
  maxAttempts: 3,
  maxLeaseExpiries: 1000,
  backoffMs: [20, 100, 500],
  pollMs: 20,
  metricsPort: null,
};

/**
 * The config file of a drill: the targets of `base` (its roots, repos, http targets, publish
 * targets, kind sections, limits, NATS and the modules of its kinds, every path absolute), the kind
 * under test registered, and its own journal and archive in `dir`; no agents, alerts or telemetry,
 * and the interpreter settings of a drill. Pure.
 */
export function drillConfigOf(
  base: Config,
  kind: DrilledKindEntry,
  dir: string,
): Record<string, unknown> {
  const {
    dir: _dir,
    file: _file,
    journal: _journal,
    agents: _agents,
    alerts: _alerts,
    telemetry: _telemetry,
    interpreter,
    repos,
    kinds,
    ...rest
  } = base;
  const moduleOf = (module: string) => {
    try {
      return resolveKindModule(module, base.dir);
    } catch {
      return module;
    }
  };
  const kindEntries: Record<string, { module: string; options?: unknown }> = Object.fromEntries(
    Object.entries(kinds).map(([name, k]) => [name, { ...k, module: moduleOf(k.module) }]),
  );
  if (kind.module !== null) {
    kindEntries[kind.name] = {
      module: moduleOf(kind.module),
      ...(kind.options === undefined ? {} : { options: kind.options }),
    };
  }
  return {
    ...rest,
    // A remote repo's parsed `path` is its mirror, which the config states as `cacheDir` alone.
    repos: Object.fromEntries(
      Object.entries(repos).map(([alias, r]) => {
        if (r.url === undefined) return [alias, r];
        const { path: _path, ...remote } = r;
        return [alias, remote];
      }),
    ),
    kinds: kindEntries,
    journal: {
      path: join(dir, "journal.db"),
      synchronous: "NORMAL",
      archiveDir: join(dir, "archive"),
    },
    interpreter: { ...DRILL_INTERPRETER, pipeline: interpreter.pipeline },
  };
}

/**
 * Makes the drill's workspace in a new folder under `parent` (default the system's temp folder):
 * its config file written, parsed and its kinds loaded (the kind under test among them), its
 * journal created.
 * @throws IdemError INVALID_CONFIG when the kind's module or options are refused (naming
 *   `kinds.<name>`), or the config cannot be written as a drill's.
 */
export async function createDrillWorkspace(
  base: Config,
  kind: DrilledKindEntry,
  parent: string = tmpdir(),
): Promise<DrillWorkspace> {
  const dir = await mkdtemp(join(parent, "idem-drill-"));
  try {
    const raw = drillConfigOf(base, kind, dir);
    const configFile = join(dir, "idem.config.json");
    await writeFile(configFile, `${JSON.stringify(raw, null, 2)}\n`);
    const parsed = parseConfig(raw, { dir, file: configFile });
    if (!parsed.ok) {
      const first = parsed.issues[0];
      throw new IdemError(
        "INVALID_CONFIG",
        `the drill's config is invalid at ${first?.path || "(root)"}: ${first?.message ?? ""}`,
        { details: { key: first?.path ?? "" } },
      );
    }
    const config = parsed.config;
    const registry = await loadKinds(config);
    if (!registry.get(kind.name)) {
      const section = registry.sectionMissing(kind.name);
      throw new IdemError(
        "INVALID_CONFIG",
        section === undefined
          ? `kind ${kind.name} is not registered in the drill's config`
          : `kind ${kind.name} needs the config's ${section} section (docs/kinds/${section}.md)`,
        { details: { key: section ?? `kinds.${kind.name}` } },
      );
    }
    // The drill's workspace is its own, made just now: it creates its journal, as idem init does.
    const journal = await openJournalStore(
      { path: config.journal.path },
      { synchronous: "NORMAL", create: true },
    );
    return {
      dir,
      configFile,
      config,
      registry,
      journal,
      async close(keep) {
        await journal.close();
        if (!keep) await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}
