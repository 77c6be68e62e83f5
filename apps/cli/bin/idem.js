#!/usr/bin/env node
// The committed bin shim: npm links it at install; it loads the built CLI. In the clone that is
// dist/main.js (tsc -b); in the packed CLI it is dist/pack/main.js, the bundle `npm pack` makes.
import { existsSync } from "node:fs";

const built = new URL("../dist/main.js", import.meta.url);
const bundle = new URL("../dist/pack/main.js", import.meta.url);
const cli = await import(existsSync(built) ? built.href : bundle.href);

// Kind modules import @idem/kit and zod from this CLI when nothing beside them provides them.
cli.provideKindImports();
process.exitCode = await cli.main(process.argv);
