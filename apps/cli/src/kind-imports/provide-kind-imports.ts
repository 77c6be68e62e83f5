import { existsSync } from "node:fs";
import { register } from "node:module";
import { fileURLToPath } from "node:url";
import type { KindImportsData } from "./kind-import-hooks.js";

/** The kit's entries the packed CLI carries beside its bundle (apps/cli/scripts/bundle.mjs). */
const BUNDLED_KIT = {
  "@idem/kit": "kit.js",
  "@idem/kit/test": "kit-test.js",
  "@idem/kit/drill": "kit-drill.js",
} as const;

/** What `provideKindImports` prepared, until `registerKindImportHooks` registers it. */
let provided: KindImportsData | undefined;

/**
 * Lets the kind modules this process loads import `@idem/kit` and `zod` without installing them:
 * a module resolution hook (Node's `module.register`) that, when an import of either does not
 * resolve from the kind's folder, resolves it to the CLI's own copy (the packed CLI's bundled kit,
 * the zod it depends on). Called once by the bin before any command runs; imports nothing more.
 * The hooks are registered by `registerKindImportHooks`, right before this process imports its
 * first kind module: a hooks thread every later import waits on, half the CPU of a one-job
 * `idem enqueue`, which loads none.
 */
export function provideKindImports(): void {
  const kit: Record<string, string> = {};
  for (const [specifier, file] of Object.entries(BUNDLED_KIT)) {
    const beside = new URL(`./${file}`, import.meta.url);
    if (existsSync(fileURLToPath(beside))) kit[specifier] = beside.href;
  }
  provided = { provided: kit, cliUrl: import.meta.url };
}

/**
 * Registers the hooks `provideKindImports` prepared, once (nothing when it was not called, as in a
 * test that imports the CLI's modules). Run by the core before the first kind module import
 * (context.ts hands it to `beforeFirstKindImport`).
 */
export function registerKindImportHooks(): void {
  const data = provided;
  provided = undefined;
  if (data) register(new URL("./kind-import-hooks.js", import.meta.url), { data });
}
