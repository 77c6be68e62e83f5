import * as crypto from "node:crypto";
import canonicalizeImport from "canonicalize";

// canonicalize ships CommonJS with `export default`; under NodeNext the callable is on .default or is the module.
const canonicalize = ((canonicalizeImport as unknown as { default?: unknown }).default ??
  canonicalizeImport) as (value: unknown) => string | undefined;

/** RFC 8785 (JSON Canonicalization Scheme) text of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value has no JSON representation");
  return text;
}

// The one-shot crypto.hash (Node 20.12+) hashes a job's input a third faster than a Hash object.
const oneShot = (
  crypto as { hash?: (alg: string, data: string | Uint8Array, enc: "hex") => string }
).hash;

/** sha256 hex of a string's UTF-8 bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return oneShot
    ? oneShot("sha256", data, "hex")
    : crypto.createHash("sha256").update(data).digest("hex");
}

/** The content hash of DESIGN.md: sha256 of the canonical JSON of the parsed object. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
