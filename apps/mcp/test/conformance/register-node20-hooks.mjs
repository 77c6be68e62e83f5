// `node --import` this file to run @modelcontextprotocol/conformance on Node 20 (node20-hooks.mjs).
import { register } from "node:module";

register("./node20-hooks.mjs", import.meta.url);
