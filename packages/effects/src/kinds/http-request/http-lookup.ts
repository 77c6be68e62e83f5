// The declarative probe of an http target (docs/kinds/http.md, "Lookup"): the key kept by the
// target as an external id, set by idem in the request, found again by a GET the config describes.
import { absent, IdemError, type ProbeResult, present, readTextPrefix } from "@idem/kit";
import type { HttpTarget } from "./http-targets.js";

/** A parsed `http.targets.<alias>.lookup`. */
export type HttpLookup = NonNullable<HttpTarget["lookup"]>;

/** The most bytes of a lookup's answer idem reads. */
export const MAX_LOOKUP_BYTES = 4 * 1024 * 1024;

/** The tokens of a JSON pointer (RFC 6901), unescaped. */
export function pointerTokens(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The value at `pointer` in `doc` (own properties and array indexes only), or undefined. */
export function resolvePointer(doc: unknown, pointer: string): unknown {
  let cur: unknown = doc;
  for (const token of pointerTokens(pointer)) {
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      cur = cur[Number(token)];
    } else if (isObject(cur)) {
      if (!Object.hasOwn(cur, token)) return undefined;
      cur = cur[token];
    } else return undefined;
  }
  return cur;
}

/**
 * Why a request body cannot carry the key at `keyField`, or undefined: it must be absent or a
 * JSON object whose parents on the way are objects (or absent), and it may not hold a value there
 * already (one chosen by the agent would make another effect look applied).
 */
export function keyFieldProblem(body: unknown, keyField: string): string | undefined {
  if (body === undefined) return undefined;
  const tokens = pointerTokens(keyField);
  let cur: unknown = body;
  for (const [i, token] of tokens.entries()) {
    if (!isObject(cur))
      return `must be a JSON object down to ${keyField}: the target keeps the effect key there`;
    if (!Object.hasOwn(cur, token)) return undefined;
    if (i === tokens.length - 1)
      return `may not set ${keyField}: idem sets it to the effect key, which the target's lookup finds`;
    cur = cur[token];
  }
  return undefined;
}

/** A copy of `body` (an object, or none) with `key` at `keyField`, parents made as needed. */
export function withKeyField(body: unknown, keyField: string, key: string): unknown {
  const root: Record<string, unknown> = isObject(body) ? structuredClone(body) : {};
  const tokens = pointerTokens(keyField);
  let cur = root;
  for (const token of tokens.slice(0, -1)) {
    if (!isObject(cur[token])) cur[token] = {};
    cur = cur[token] as Record<string, unknown>;
  }
  cur[tokens.at(-1) as string] = key;
  return root;
}

/**
 * The answer of a lookup, read as JSON: 200 is looked into; 404 is absent with `absentOn404` (a
 * lookup by id), else the path is wrong; any other status is the caller's (`undefined` here).
 * @throws IdemError INVALID_CONFIG naming `http.targets.<alias>.lookup[.path]` for a 404 without
 * `absentOn404`, or a 200 whose body is not JSON or is larger than MAX_LOOKUP_BYTES.
 */
export async function readLookup(
  res: Response,
  lookup: HttpLookup,
  alias: string,
): Promise<{ found: unknown } | "not-found" | undefined> {
  const key = `http.targets.${alias}.lookup`;
  if (res.status === 404) {
    await res.body?.cancel().catch(() => {});
    if (lookup.absentOn404) return "not-found";
    throw new IdemError(
      "INVALID_CONFIG",
      `${key}.path: the lookup answered 404 (set absentOn404 if that means no such item)`,
      { details: { key: `${key}.path` } },
    );
  }
  if (res.status !== 200) return undefined;
  const { text, truncated } = await readTextPrefix(res, MAX_LOOKUP_BYTES);
  if (truncated)
    throw new IdemError(
      "INVALID_CONFIG",
      `${key}: the answer is larger than ${MAX_LOOKUP_BYTES} bytes`,
      {
        details: { key },
      },
    );
  try {
    return { found: JSON.parse(text) };
  } catch {
    throw new IdemError("INVALID_CONFIG", `${key}: the answer is not JSON`, { details: { key } });
  }
}

/**
 * Whether the answer holds the key where the lookup says: `match` an array whose items (or each
 * item's `field`) include it, or a value equal to it. Only a string equal to the key counts. An
 * answer carrying anything else and not the key (other items, another value) is a filter the
 * service ignores or widens: answering absent there would send the effect twice, so it is refused.
 * @throws IdemError INVALID_CONFIG naming `http.targets.<alias>.lookup.match` when the answer has
 * nothing at `match` (its shape is not what the config says), or `...lookup.path` when it holds
 * items or a value of another key.
 */
export function lookupResult(
  doc: unknown,
  lookup: HttpLookup,
  key: string,
  alias: string,
): ProbeResult {
  const at = resolvePointer(doc, lookup.match);
  const k = `http.targets.${alias}.lookup`;
  if (at === undefined) {
    throw new IdemError(
      "INVALID_CONFIG",
      `${k}.match: the lookup's answer has nothing at ${JSON.stringify(lookup.match)}`,
      { details: { key: `${k}.match` } },
    );
  }
  if (at === null || (Array.isArray(at) && at.length === 0)) return absent({ lookup: "none" });
  if (Array.isArray(at)) {
    const i = at.findIndex(
      (item) => (lookup.field === undefined ? item : resolvePointer(item, lookup.field)) === key,
    );
    if (i >= 0) return present({ lookup: "found", index: i });
  } else if (at === key) return present({ lookup: "found" });
  throw unfiltered(k, key);
}

/** The lookup answered something, none of it the key: the service does not filter by it. */
export function unfiltered(k: string, key: string): IdemError {
  return new IdemError(
    "INVALID_CONFIG",
    `${k}.path: the lookup for ${JSON.stringify(key)} answered items that do not carry it: the service ignores or widens the filter, and absent could not be told from another item (use a filter by exact external id)`,
    { details: { key: `${k}.path` } },
  );
}
