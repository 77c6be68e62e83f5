// What an entry point sets with beforeFirstKindImport (the CLI's module resolution hooks) runs once,
// right before the process's first kind module is imported: never for a config without kinds, and
// before the module's own top-level code.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@idem/schema";
import { afterAll, describe, expect, it } from "vitest";
import { beforeFirstKindImport } from "../src/registry/kind-imports.js";
import { loadKindRegistry } from "../src/registry/kind-registry.js";

const dir = mkdtempSync(join(tmpdir(), "idem-kind-imports-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The order things happened in: the preparer's runs and the kind module's evaluation. */
const seen: string[] = [];
(globalThis as { __idemKindImportsSeen?: string[] }).__idemKindImportsSeen = seen;

function config(kinds: Record<string, { module: string }>) {
  const r = parseConfig({ journal: { path: ":memory:" }, kinds }, { dir });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

describe("beforeFirstKindImport", () => {
  it("runs once, before the first kind module's own code, and not for a config without kinds", async () => {
    beforeFirstKindImport(() => seen.push("prepare"));
    await loadKindRegistry(config({}), []);
    expect(seen).toEqual([]);

    // A module that notes when it runs (and exports no kind: the load is refused after it ran).
    for (const name of ["one", "two"]) {
      writeFileSync(
        join(dir, `${name}.mjs`),
        `globalThis.__idemKindImportsSeen.push("module ${name}");\n`,
      );
    }
    await expect(
      loadKindRegistry(config({ "acme.one": { module: "./one.mjs" } }), []),
    ).rejects.toThrow(/exports no effect kind named acme\.one/);
    await expect(
      loadKindRegistry(config({ "acme.two": { module: "./two.mjs" } }), []),
    ).rejects.toThrow(/exports no effect kind named acme\.two/);
    expect(seen).toEqual(["prepare", "module one", "module two"]);
  });
});
