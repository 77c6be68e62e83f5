#!/usr/bin/env node
// `npm pack` of the CLI runs this (prepack): the CLI and the @idem/* workspace packages it runs
// (they are not published) bundled from their TypeScript sources into dist/pack (main.js, and a
// chunk per command's action that main.js imports when the command runs), with the
// @nats-io client and @octokit (pure JS: bundled with the @nats-io/nuid the lock pins, whose engines allow Node
// 20; an installed nats-core would pull nuid 3, which wants Node 22) and every other third-party
// package left to `dependencies` (better-sqlite3 is native; pino loads its transports by name).
// A dynamic import() of the bundled CommonJS client gets the named exports Node gives the clone
// (see the plugin). It fails, naming the package, when the bundle imports or requires by name a
// third-party package that apps/cli/package.json does not list in `dependencies`, so the tarball
// cannot install without it.
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const cli = resolve(dirname(fileURLToPath(import.meta.url)), "..");
// dist/pack (what `npm pack` ships), or the folder named by the first argument (a test's own).
const out = process.argv[2] === undefined ? join(cli, "dist/pack") : resolve(process.argv[2]);
const pkg = JSON.parse(readFileSync(join(cli, "package.json"), "utf8"));
const declared = new Set(Object.keys(pkg.dependencies ?? {}));

/**
 * The journal finds each store's migrations beside its own module (SQLite's `migrations`,
 * PostgreSQL's `migrations-pg`); in the bundle they sit beside main.js.
 */
const STORES = { sqlite: "migrations", postgres: "migrations-pg" };

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
const packageName = (spec) =>
  spec
    .split("/")
    .slice(0, spec.startsWith("@") ? 2 : 1)
    .join("/");

/** Each store's migrations folder, found where its connection module is bundled from. */
const migrations = new Map();

/**
 * Bundled third-party packages (the rest stay imports of node_modules): the @nats-io client, and
 * the @octokit packages of the GitHub kinds, whose newer patch releases pull content-type 3, which
 * wants Node 22 (the root's overrides pin @octokit/request 10.0.14, which an install of the tarball
 * would not see). What they import is bundled with them unless `dependencies` lists it.
 */
const BUNDLED = /^@(nats-io|octokit)\//;

/** Whether Node loads `file` as CommonJS: `.cjs`, or `.js` whose nearest package.json has no "type": "module". */
function isCommonJs(file) {
  if (file.endsWith(".cjs")) return true;
  if (!file.endsWith(".js")) return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, "utf8")).type !== "module";
    if (dirname(dir) === dir) return true;
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

const plugin = {
  name: "idem-pack",
  setup(b) {
    // A dynamic import() of a bundled CommonJS package (@nats-io/transport-node, loaded on first
    // use by packages/nats/src/nats-client.ts) becomes a chunk whose only export is `default`
    // (module.exports), where Node gives the clone the named exports as well: `connect` would be
    // undefined in the installed CLI. Such an import is resolved to an ES module of our own that
    // imports the package statically and re-exports, by name, every export Node finds in it.
    b.onResolve({ filter: BUNDLED }, async (args) => {
      if (args.kind !== "dynamic-import" || args.namespace === "idem-named-exports")
        return undefined;
      const found = await b.resolve(args.path, {
        kind: "import-statement",
        resolveDir: args.resolveDir,
        importer: args.importer,
      });
      if (found.errors.length > 0 || !isCommonJs(found.path)) return undefined;
      // `.mjs`: esbuild then imports the CommonJS as Node does, `default` being module.exports
      // (the chunk is named after the package: transport-node-<hash>.js).
      return {
        path: `${args.path}.mjs`,
        namespace: "idem-named-exports",
        pluginData: { file: found.path },
      };
    });
    b.onLoad({ filter: /.*/, namespace: "idem-named-exports" }, async (args) => {
      const { file } = args.pluginData;
      const names = Object.keys(await import(pathToFileURL(file).href));
      // Node 23 and later also name the CommonJS module itself "module.exports": not an export.
      const named = names.filter((n) => n !== "default" && n !== "module.exports");
      const odd = named.filter((n) => !IDENTIFIER.test(n));
      if (odd.length > 0) throw new Error(`${file}: exports ${odd.join(", ")} are not identifiers`);
      const from = JSON.stringify(file);
      return {
        contents: `import cjs from ${from};\nexport default cjs;\nexport const { ${named.join(", ")} } = cjs;\n`,
        resolveDir: dirname(file),
        loader: "js",
      };
    });
    // Every bare import but @idem/*, the BUNDLED packages and what only they import stays an
    // import of node_modules (a dependency).
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("@idem/") || BUNDLED.test(args.path)) return undefined;
      const fromBundled = /[\\/]node_modules[\\/]/.test(args.importer);
      if (fromBundled && !declared.has(packageName(args.path))) return undefined;
      return { path: args.path, external: true };
    });
    b.onLoad(
      { filter: /[\\/]journal[\\/]src[\\/]store[\\/](sqlite|postgres)[\\/]connection\.ts$/ },
      (args) => {
        const store = /(sqlite|postgres)[\\/]connection\.ts$/.exec(args.path)[1];
        const folder = STORES[store];
        const from = `"../../../${folder}"`;
        const text = readFileSync(args.path, "utf8");
        if (text.split(from).length !== 2) {
          throw new Error(`${args.path}: expected the migrations path ${from} once`);
        }
        migrations.set(folder, join(dirname(args.path), "../../..", folder));
        return { contents: text.replace(from, `"./${folder}"`), loader: "ts" };
      },
    );
  },
};

rmSync(out, { recursive: true, force: true });
const result = await build({
  // main.js, the hooks file `module.register` loads on its own, and the kit's entries the hooks
  // hand to kind modules that import @idem/kit (sharing its chunks with the CLI: one IdemError).
  entryPoints: [
    { in: join(cli, "src/main.ts"), out: "main" },
    { in: join(cli, "src/kind-imports/kind-import-hooks.ts"), out: "kind-import-hooks" },
    { in: join(cli, "../../packages/kit/src/index.ts"), out: "kit" },
    { in: join(cli, "../../packages/kit/src/tester/index.ts"), out: "kit-test" },
    { in: join(cli, "../../packages/kit/src/drill/drill-kind.ts"), out: "kit-drill" },
  ],
  outdir: out,
  // Each command's action (a dynamic import in src/commands) is a chunk beside main.js with the
  // imports it needs, so `idem status` loads neither the executor nor pg, NATS or OpenTelemetry.
  splitting: true,
  chunkNames: "[name]-[hash]",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // The workspace packages' own export condition points at their TypeScript sources: no build needed.
  conditions: ["@idem/source"],
  sourcemap: true,
  // The bundled CommonJS (the @nats-io client) requires node's builtins.
  banner: {
    js: 'import { createRequire as __idemCreateRequire } from "node:module";\nconst require = __idemCreateRequire(import.meta.url);',
  },
  metafile: true,
  logLevel: "warning",
  plugins: [plugin],
});

const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const missing = new Set();
for (const input of Object.values(result.metafile.inputs)) {
  for (const imp of input.imports) {
    if (!imp.external || builtins.has(imp.path)) continue;
    const name = packageName(imp.path);
    if (!declared.has(name)) missing.add(name);
  }
}
// What is required by name at run time (createRequire: pino, pino-pretty, cli-table3,
// OpenTelemetry; the bundled @nats-io client's own requires) is no import esbuild sees: found in
// the output's text instead.
for (const file of Object.keys(result.metafile.outputs).filter((f) => f.endsWith(".js"))) {
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/\b[\w$]*[rR]equire[\w$]*\(\s*"([^"./][^"]*)"\s*\)/g)) {
    if (!builtins.has(m[1]) && !declared.has(packageName(m[1]))) missing.add(packageName(m[1]));
  }
}
if (missing.size > 0) {
  console.error(
    `idem pack: the bundle imports or requires ${[...missing].join(", ")}, not in apps/cli/package.json dependencies`,
  );
  process.exit(1);
}
for (const folder of Object.values(STORES)) {
  const from = migrations.get(folder);
  if (from === undefined) {
    console.error(`idem pack: the journal's connection module for ${folder} was not bundled`);
    process.exit(1);
  }
  cpSync(from, join(out, folder), { recursive: true });
}
console.error(
  `idem pack: ${join(relative(cli, out), "main.js")} and the migrations of both stores`,
);
