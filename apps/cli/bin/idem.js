#!/usr/bin/env node
// The committed bin shim: npm links it at install; it loads the built CLI. In the clone that is
// dist/main.js (tsc -b); in the packed CLI it is dist/pack/main.js, the bundle `npm pack` makes.
import { existsSync } from "node:fs";

const built = new URL("../dist/main.js", import.meta.url);
const bundle = new URL("../dist/pack/main.js", import.meta.url);
const { main } = await import(existsSync(built) ? built.href : bundle.href);

process.exitCode = await main(process.argv);
