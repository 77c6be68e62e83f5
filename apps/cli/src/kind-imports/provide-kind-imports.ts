import { existsSync } from "node:fs";
import { register } from "node:module";
import { fileURLToPath } from "node:url";
import { beforeFirstKindImport } from "@idem/core/kind-imports";
import type { KindImportsData } from "./kind-import-hooks.js";

/** The kit's entries the packed CLI carries beside its bundle (apps/cli/scripts/bundle.mjs). */
const BUNDLED_KIT = {
  "@idem/kit": "kit.js",
  "@idem/kit/test": "kit-test.js",
  "@idem/kit/drill": "kit-drill.js",
} as const;

/**
 * Lets the kind modules this process loads import `@idem/kit` and `zod` without installing them:
 * a module resolution hook (Node's `module.register`) that, when an import of either does not
 * resolve from the kind's folder, resolves it to the CLI's own copy (the packed CLI's bundled kit,
 * the zod it depends on). Called once by the bin before any command runs; the hooks are registered
 * only right before this process imports its first kind module (a hooks thread every later import
 * waits on: half the CPU of a one-job `idem enqueue`, which loads none).
 */
export function provideKindImports(): void {
  const provided: Record<string, string> = {};
  for (const [specifier, file] of Object.entries(BUNDLED_KIT)) {
    const beside = new URL(`./${file}`, import.meta.url);
    if (existsSync(fileURLToPath(beside))) provided[specifier] = beside.href;
  }
  const data: KindImportsData = { provided, cliUrl: import.meta.url };
  beforeFirstKindImport(() =>
    register(new URL("./kind-import-hooks.js", import.meta.url), { data }),
  );
}
