import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { prepareKindImport } from "@idem/effects/kind-imports";
import { type AnyEffectKind, kindSchemaProblem } from "@idem/kit";
import { IdemError } from "@idem/schema";

/** A module of effect kinds, loaded: where it is and the kinds it exports. */
export interface KindModule {
  /** What a config's `kinds.<name>.module` names it by: its absolute file path. */
  module: string;
  /** The kinds it exports (its default export first), each once. */
  kinds: AnyEffectKind[];
}

/**
 * Where a kind module is: a file URL or a path (relative to `fromDir`) as an absolute path, or a
 * package name resolved from `fromDir` as Node would resolve it from there (its file's path).
 * @throws IdemError INVALID_INPUT naming `module` when nothing is there.
 */
export function resolveKindModule(specifier: string, fromDir: string): string {
  const bad = (why: string, cause?: unknown): never => {
    throw new IdemError("INVALID_INPUT", `module ${JSON.stringify(specifier)}: ${why}`, {
      details: { field: "module" },
      ...(cause === undefined ? {} : { cause }),
    });
  };
  if (specifier.startsWith("file:")) return fileURLToPath(specifier);
  const path = isAbsolute(specifier) ? specifier : resolve(fromDir, specifier);
  if (isAbsolute(specifier) || specifier.startsWith(".")) {
    try {
      return createRequire(join(fromDir, "noop.js")).resolve(path);
    } catch (e) {
      return bad(`no such file (${path})`, e);
    }
  }
  try {
    return createRequire(join(fromDir, "noop.js")).resolve(specifier);
  } catch (e) {
    return bad(`cannot resolve it from ${fromDir}: ${(e as Error).message}`, e);
  }
}

/**
 * Imports a kind module and answers the kinds it exports: every export that has a name, a probe
 * and an apply (what `defineEffectKind` makes), its default export first, each name once (an
 * export that is a copy of the default kind, a plain object spread from it, is the same kind). Runs the module's own
 * top-level code, as loading it in a config does; runs no kind's `open`.
 * @throws IdemError INVALID_INPUT naming `module` when it cannot be resolved or loaded, or exports
 *   no kind.
 */
export async function loadKindModule(specifier: string, fromDir: string): Promise<KindModule> {
  const module = resolveKindModule(specifier, fromDir);
  let mod: unknown;
  try {
    prepareKindImport();
    mod = await import(pathToFileURL(module).href);
  } catch (e) {
    throw new IdemError(
      "INVALID_INPUT",
      `module ${JSON.stringify(specifier)} cannot be loaded: ${(e as Error).message}`,
      { cause: e, details: { field: "module" } },
    );
  }
  const exported =
    typeof mod === "object" && mod !== null
      ? [(mod as { default?: unknown }).default, ...Object.values(mod)]
      : [];
  const kinds: AnyEffectKind[] = [];
  for (const candidate of exported) {
    // One kind per name, the default export's first: as a config's loader picks it by name.
    if (isKindObject(candidate) && !kinds.some((k) => k.name === candidate.name))
      kinds.push(candidate);
  }
  for (const kind of kinds) {
    const schemas = kindSchemaProblem(kind);
    if (schemas !== undefined)
      throw new IdemError(
        "INVALID_INPUT",
        `module ${JSON.stringify(specifier)}: kind ${kind.name}: ${schemas}`,
        {
          details: { field: "module" },
        },
      );
  }
  if (kinds.length === 0) {
    throw new IdemError(
      "INVALID_INPUT",
      `module ${JSON.stringify(specifier)} exports no effect kind (export default defineEffectKind({ ... }))`,
      { details: { field: "module" } },
    );
  }
  return { module, kinds };
}

function isKindObject(c: unknown): c is AnyEffectKind {
  return (
    typeof c === "object" &&
    c !== null &&
    typeof (c as { name?: unknown }).name === "string" &&
    typeof (c as { probe?: unknown }).probe === "function" &&
    typeof (c as { apply?: unknown }).apply === "function"
  );
}
