import * as crypto from "node:crypto";
import canonicalizeImport from "canonicalize";

// canonicalize ships CommonJS with `export default`; under NodeNext the callable is on .default or is the module.
const canonicalize = ((canonicalizeImport as unknown as { default?: unknown }).default ??
  canonicalizeImport) as (value: unknown) => string | undefined;

/**
 * The RFC 8785 (JSON Canonicalization Scheme) text of a JSON value.
 *
 * Keys sorted, numbers and strings in their one canonical form, so equal values give equal text on
 * every machine and version.
 * @throws TypeError when the value has no JSON representation (undefined, a function, a symbol);
 *   not an IdemError: callers pass values that were parsed from JSON.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value has no JSON representation");
  return text;
}

// The one-shot crypto.hash (Node 20.12+) hashes a job's input a third faster than a Hash object.
const oneShot = (
  crypto as { hash?: (alg: string, data: string | Uint8Array, enc: "hex") => string }
).hash;

/** The lowercase hex sha256 of a string's UTF-8 bytes (or of the bytes given). Never throws. */
export function sha256Hex(data: string | Uint8Array): string {
  return oneShot
    ? oneShot("sha256", data, "hex")
    : crypto.createHash("sha256").update(data).digest("hex");
}

/**
 * The content hash of an output (docs/concepts.md, "Records"): the sha256 of the canonical JSON of a parsed value.
 *
 * Two outputs for one job are duplicates when their content hashes are equal and a conflict when
 * they differ, whatever the key order or spacing of the text that was sent.
 * @throws TypeError as canonicalJson does, for a value with no JSON representation.
 */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
