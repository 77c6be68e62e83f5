// Each package ready to publish: `npm pack --dry-run` of every workspace package that is not private
// (built first: `npm test` builds before it runs the tests) ships its README, its package.json, its
// built JavaScript with the types, and its TypeScript sources (the declaration and source maps point
// at them, and so does the "@idem/source" export condition); never a test, the build info, or a
// path that exists only in the workspace. The CLI ships as one bundle made when it is packed
// (test/install/packed-cli.test.ts packs, installs and runs it); here its manifest and file list are
// checked without running that script. Dry runs only: nothing is written.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const run = promisify(execFile);

interface Manifest {
  name: string;
  private?: boolean;
  description?: string;
  license?: string;
  engines?: { node?: string };
  files?: string[];
  bin?: Record<string, string>;
  exports?: unknown;
  publishConfig?: { access?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, "utf8")) as T;
const rootManifest = readJson<Manifest & { workspaces: string[] }>(join(ROOT, "package.json"));

/** Every workspace package: its folder (relative to the root) and its manifest. */
const workspace = rootManifest.workspaces.flatMap((pattern) => {
  const top = pattern.replace(/\/\*$/, "");
  return readdirSync(join(ROOT, top), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(ROOT, top, d.name, "package.json")))
    .map((d) => {
      const dir = `${top}/${d.name}`;
      return { dir, manifest: readJson<Manifest>(join(ROOT, dir, "package.json")) };
    });
});
const published = workspace.filter((p) => p.manifest.private !== true);
const libraries = published.filter((p) => p.manifest.bin === undefined);

/** The files `npm pack` would put in the tarball of one workspace package (no script run). */
async function packedFiles(name: string): Promise<string[]> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  const { stdout } = await run(
    "npm",
    ["pack", "--dry-run", "--json", "--ignore-scripts", "-w", name],
    { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 },
  );
  const [result] = JSON.parse(stdout) as { name: string; files: { path: string }[] }[];
  expect(result?.name).toBe(name);
  return (result?.files ?? []).map((f) => f.path).sort();
}

/** Every string at the leaves of an `exports` map. */
function exportTargets(exports: unknown): string[] {
  if (typeof exports === "string") return [exports];
  if (typeof exports !== "object" || exports === null) return [];
  return Object.values(exports).flatMap(exportTargets);
}

/** Every condition object of an `exports` map (the objects whose keys are not subpaths). */
function conditionObjects(exports: unknown): Record<string, unknown>[] {
  if (typeof exports !== "object" || exports === null) return [];
  const entries = Object.entries(exports);
  const here = entries.some(([k]) => !k.startsWith("."))
    ? [exports as Record<string, unknown>]
    : [];
  return [...here, ...entries.flatMap(([, v]) => conditionObjects(v))];
}

const NEVER_SHIPPED = [
  /(^|\/)(test|tests|__tests__|fixtures)\//,
  /\.(test|spec)\.[cm]?[jt]s$/,
  /tsbuildinfo/,
  /(^|\/)node_modules\//,
  /\.tgz$/,
];
const WORKSPACE_SPEC = /^(file:|link:|workspace:|portal:|\.{0,2}\/)/;

/** Dependency specs that only resolve inside this workspace. */
function workspaceOnlySpecs(m: Manifest): string[] {
  const kinds = [m.dependencies, m.devDependencies, m.peerDependencies, m.optionalDependencies];
  return kinds.flatMap((deps) =>
    Object.entries(deps ?? {})
      .filter(([, spec]) => WORKSPACE_SPEC.test(spec))
      .map(([dep, spec]) => `${dep}@${spec}`),
  );
}

/** The relative imports of the packed JavaScript that do not land on a packed file. */
function danglingImports(dir: string, files: string[]): string[] {
  const packed = new Set(files);
  const out: string[] = [];
  for (const file of files.filter((f) => /\.js$/.test(f))) {
    const text = readFileSync(join(ROOT, dir, file), "utf8");
    for (const m of text.matchAll(/(?:from\s*|import\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      const target = posix.normalize(posix.join(posix.dirname(file), m[1] as string));
      if (!packed.has(target)) out.push(`${file} -> ${m[1]}`);
    }
  }
  return out;
}

/** The sources of the packed source maps that are not packed themselves. */
function danglingMapSources(dir: string, files: string[]): string[] {
  const packed = new Set(files);
  return files
    .filter((f) => f.endsWith(".map"))
    .flatMap((f) => {
      const map = readJson<{ sources?: string[] }>(join(ROOT, dir, f));
      return (map.sources ?? [])
        .map((s) => posix.normalize(posix.join(posix.dirname(f), s)))
        .filter((s) => !packed.has(s))
        .map((s) => `${f} -> ${s}`);
    });
}

describe("the workspace's packages", () => {
  it("are each published or private on purpose: the libraries and the CLI published, the harnesses and the three apps the CLI bundles private", () => {
    expect(published.map((p) => p.manifest.name).sort()).toEqual([
      "@idem/cli",
      "@idem/client",
      "@idem/core",
      "@idem/effects",
      "@idem/git",
      "@idem/journal",
      "@idem/kit",
      "@idem/nats",
      "@idem/runtime",
      "@idem/schema",
    ]);
    const cli = workspace.find((p) => p.manifest.name === "@idem/cli")?.manifest as Manifest;
    for (const p of workspace.filter((w) => w.manifest.private === true)) {
      // Private and still described: a README that says so, and nothing a published one needs.
      expect(readFileSync(join(ROOT, p.dir, "README.md"), "utf8")).toMatch(/not published/i);
      expect(p.manifest.engines?.node).toBe(rootManifest.engines?.node);
      if (p.dir.startsWith("apps/"))
        expect(Object.keys(cli.devDependencies ?? {})).toContain(p.manifest.name);
    }
  });

  it.each(libraries.map((p) => [p.manifest.name, p] as const))(
    "%s ships its README, package.json, dist with types and src, nothing else of the workspace",
    async (name, { dir, manifest }) => {
      const files = await packedFiles(name);
      expect(files, `build first (npm run build): ${dir}/dist is missing`).toContain(
        "dist/index.js",
      );
      expect(files).toEqual(
        expect.arrayContaining(["dist/index.d.ts", "README.md", "LICENSE", "package.json"]),
      );
      expect(files.filter((f) => NEVER_SHIPPED.some((re) => re.test(f)))).toEqual([]);
      // TypeScript sources ship under src/ only, each beside its build.
      const sources = files.filter((f) => /\.[cm]?ts$/.test(f) && !/\.d\.[cm]?ts$/.test(f));
      expect(sources.filter((f) => !f.startsWith("src/"))).toEqual([]);
      const missingBuild = sources.filter(
        (f) => !files.includes(f.replace(/^src\//, "dist/").replace(/\.([cm]?)ts$/, ".$1js")),
      );
      expect(missingBuild).toEqual([]);
      // Every export target, in every condition, is in the tarball; types come first.
      const targets = exportTargets(manifest.exports).map((t) => t.replace(/^\.\//, ""));
      expect(targets.length).toBeGreaterThan(0);
      expect(targets.filter((t) => !files.includes(t))).toEqual([]);
      for (const conditions of conditionObjects(manifest.exports)) {
        expect(Object.keys(conditions)[0]).toBe("types");
      }
      expect(danglingImports(dir, files)).toEqual([]);
      expect(danglingMapSources(dir, files)).toEqual([]);
      expect(workspaceOnlySpecs(manifest)).toEqual([]);
      expect(manifest).toMatchObject({
        license: "Apache-2.0",
        engines: { node: rootManifest.engines?.node },
        publishConfig: { access: "public" },
      });
      expect(manifest.description?.length ?? 0).toBeGreaterThan(20);
      expect(readFileSync(join(ROOT, dir, "README.md"), "utf8")).toMatch(
        new RegExp(`^# ${name.replace("/", "\\/")}\\n\\n\\S`),
      );
    },
    120_000,
  );

  it("ships the journal's migrations where its built connection module looks for them", async () => {
    const files = await packedFiles("@idem/journal");
    const connection = "dist/store/sqlite/connection.js";
    const text = readFileSync(join(ROOT, "packages/journal", connection), "utf8");
    const rel = /["'](\.\.\/(?:\.\.\/)*migrations)["']/.exec(text)?.[1];
    expect(rel, "the migrations path in the built connection module").toBeDefined();
    const folder = posix.normalize(posix.join(posix.dirname(connection), rel as string));
    expect(files).toContain(`${folder}/meta/_journal.json`);
  }, 120_000);

  it("@idem/cli ships its bin and its bundle only, with idem's own packages bundled rather than depended on", async () => {
    const cli = published.find((p) => p.manifest.name === "@idem/cli") as (typeof published)[0];
    const files = await packedFiles("@idem/cli");
    const bins = Object.values(cli.manifest.bin ?? {}).map((b) => b.replace(/^\.\//, ""));
    expect(bins).toEqual(["bin/idem.js"]);
    expect(files).toEqual(
      expect.arrayContaining([...bins, "README.md", "LICENSE", "package.json"]),
    );
    const outside = files.filter(
      (f) =>
        !["README.md", "LICENSE", "package.json"].includes(f) && !/^(bin|dist\/pack)\//.test(f),
    );
    expect(outside).toEqual([]);
    expect(cli.manifest.files).toEqual(["bin", "dist/pack", "README.md"]);
    expect(
      Object.keys(cli.manifest.dependencies ?? {}).filter((d) => d.startsWith("@idem/")),
    ).toEqual([]);
    expect(workspaceOnlySpecs(cli.manifest)).toEqual([]);
    expect(cli.manifest).toMatchObject({
      license: "Apache-2.0",
      engines: { node: rootManifest.engines?.node },
      publishConfig: { access: "public" },
    });
  }, 120_000);
});
