#!/usr/bin/env node
// The committed bin shim: npm links it at install; it loads the built CLI.
import { main } from "../dist/main.js";

process.exitCode = await main(process.argv);
