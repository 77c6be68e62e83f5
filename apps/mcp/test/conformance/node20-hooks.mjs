// Loader hooks that let @modelcontextprotocol/conformance run on Node 20: its bundle imports
// `globSync` from "fs" (Node 22), which only its `tier-check` command calls. On a Node without it,
// that one import is replaced by a function that throws; on Node 22 and later nothing changes.
import * as fs from "node:fs";

export async function load(url, context, next) {
  const loaded = await next(url, context);
  if (
    fs.globSync !== undefined ||
    !url.endsWith("/@modelcontextprotocol/conformance/dist/index.js")
  )
    return loaded;
  const source = String(loaded.source);
  const imported = "globSync as o,";
  if (!source.includes(imported))
    throw new Error("conformance on Node 20: its bundle no longer imports globSync as expected");
  return {
    ...loaded,
    source: `${source.replace(imported, "")}\nfunction o(){throw new Error("globSync needs Node 22")}\n`,
  };
}
