/**
 * GitHub's own published OpenAPI description of api.github.com (the `@octokit/openapi` package,
 * `generated/api.github.com.json`, OpenAPI 3.0.3), made checkable by ajv: the operations the
 * stand-in serves and every `#/components/...` they reach are copied (`reduceDescription`, into
 * github-openapi.ts) and their OpenAPI 3.0 dialect turned into JSON Schema (draft-07) once per
 * process.
 *
 * The conversions, each because GitHub's description needs it:
 * - `nullable: true` becomes a `"null"` type (or an `anyOf` with `{type: "null"}` where GitHub
 *   writes `nullable` beside an `allOf`/`$ref` without a `type`, meaning "or null");
 * - `oneOf` becomes `anyOf`: the description's alternatives overlap (a private user is also a
 *   public one, `null` matches every nullable branch), so "exactly one" would refuse GitHub's own
 *   examples;
 * - OpenAPI-only keywords (`example`, `discriminator`, `x-*`, ...) are dropped.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { GITHUB_OPENAPI } from "./github-openapi.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The description's `info.version` of the copy the stand-in reads (a date-like tag). */
export interface GitHubDescription {
  readonly version: string;
  /** Every path template of the description, for telling "not GitHub" from "not served". */
  readonly templates: readonly string[];
  /** The operation at `method` and `template`, converted, or undefined. */
  operation(method: string, template: string): Json | undefined;
  /** The validator of the converted schema at this pointer into the reduced document. */
  validator(pointer: readonly string[]): ValidateFunction;
  /** Follows a local `$ref` of the reduced document (parameters, responses, headers). */
  follow(value: Json): Json;
}

const DROP = new Set([
  "example",
  "examples",
  "discriminator",
  "externalDocs",
  "xml",
  "deprecated",
  "readOnly",
  "writeOnly",
  "description",
  "title",
]);

/** OpenAPI 3.0 schema -> JSON Schema draft-07 (see the file header). */
function convert(node: unknown, inSchema: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => convert(n, inSchema));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    // Only inside schemas: outside them `x-...` and "description" are also names (of headers,
    // of properties), and operations keep their `x-multi-segment`.
    if (inSchema && (DROP.has(k) || k.startsWith("x-"))) continue;
    if (k === "properties" && inSchema && isObject(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, convert(s, true)]));
      continue;
    }
    const childIsSchema = inSchema || k === "schema" || k === "schemas";
    out[k === "oneOf" && inSchema ? "anyOf" : k] = convert(v, childIsSchema);
  }
  if (inSchema && out.nullable === true) {
    delete out.nullable;
    if (typeof out.type === "string") {
      out.type = [out.type, "null"];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else {
      return { anyOf: [out, { type: "null" }] };
    }
  } else if (inSchema) {
    delete out.nullable;
  }
  return out;
}

/** The `#/components/<section>/<name>` refs reachable from `start`, transitively. */
function reachableComponents(document: Json, start: unknown): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const components = (isObject(document.components) ? document.components : {}) as Record<
    string,
    Json
  >;
  const walk = (node: unknown) => {
    if (Array.isArray(node)) {
      for (const n of node) walk(n);
      return;
    }
    if (!isObject(node)) return;
    const ref = node.$ref;
    if (typeof ref === "string" && ref.startsWith("#/components/")) {
      const [section, name] = ref.slice("#/components/".length).split("/") as [string, string];
      const names = found.get(section) ?? new Set<string>();
      found.set(section, names);
      if (!names.has(name)) {
        names.add(name);
        walk(components[section]?.[name]);
      }
    }
    for (const v of Object.values(node)) walk(v);
  };
  walk(start);
  return found;
}

/** The path template and method of each operation the stand-in serves. */
export const SERVED_OPERATIONS = [
  ["get", "/user"],
  ["get", "/users/{username}"],
  ["get", "/app"],
  ["post", "/app/installations/{installation_id}/access_tokens"],
  ["get", "/rate_limit"],
  ["get", "/repos/{owner}/{repo}"],
  ["get", "/repos/{owner}/{repo}/pulls"],
  ["post", "/repos/{owner}/{repo}/pulls"],
  ["get", "/repos/{owner}/{repo}/pulls/{pull_number}"],
  ["get", "/repos/{owner}/{repo}/issues"],
  ["post", "/repos/{owner}/{repo}/issues"],
  ["get", "/repos/{owner}/{repo}/issues/{issue_number}"],
  ["get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"],
  ["post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"],
  ["post", "/repos/{owner}/{repo}/git/refs"],
  ["get", "/repos/{owner}/{repo}/git/ref/{ref}"],
  ["get", "/search/issues"],
] as const;

/** Formats the description uses that ajv should check; the others (int64, repo.nwo, ...) pass. */
const FORMATS: Record<string, RegExp | true> = {
  "date-time": /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i,
  date: /^\d{4}-\d{2}-\d{2}$/,
  uri: /^[a-z][a-z0-9+.-]*:[^\s]*$/i,
  email: /^[^\s@]+@[^\s@]+$/,
};
const IGNORED_FORMATS = ["int64", "int32", "double", "repo.nwo", "binary", "uri-template"];

/**
 * The part of GitHub's description the stand-in reads, as `@octokit/openapi` gives it (not yet
 * converted): its version, every path template, the served operations and every component they
 * reach. About 1/50 of the whole; kept in `github-openapi.ts` so the stand-in ships without the
 * 13 MB package (scripts/github-openapi.mjs writes it; a test checks it is still the package's).
 */
export interface ReducedDescription {
  version: string;
  templates: string[];
  paths: Record<string, Json>;
  components: Record<string, Json>;
}

/**
 * The served operations of `full` (GitHub's whole description) and what they reach.
 * @throws Error when the description lacks an operation the stand-in serves
 */
export function reduceDescription(full: Json): ReducedDescription {
  const fullPaths = full.paths as Record<string, Json>;
  const paths: Record<string, Json> = {};
  for (const [method, template] of SERVED_OPERATIONS) {
    const op = fullPaths[template]?.[method];
    if (!isObject(op)) throw new Error(`GitHub's description has no ${method} ${template}`);
    paths[template] = { ...(paths[template] ?? {}), [method]: op };
  }
  // Cross-cutting answers (401, 403 and 429 of rate limits, 404) are checked against these even
  // where an operation does not list them: GitHub answers them on every operation.
  const extra = { $ref: "#/components/schemas/basic-error" };
  const reach = reachableComponents(full, [paths, extra]);
  const fullComponents = full.components as Record<string, Json>;
  const components: Record<string, Json> = {};
  for (const [section, names] of [...reach].sort(([a], [b]) => a.localeCompare(b))) {
    components[section] = Object.fromEntries(
      [...names].sort().map((n) => [n, fullComponents[section]?.[n]]),
    );
  }
  const version = String((full.info as Json | undefined)?.version ?? "unknown");
  return { version, templates: Object.keys(fullPaths), paths, components };
}

let cached: GitHubDescription | undefined;

/**
 * GitHub's description, made checkable once per process from the reduced copy kept beside this
 * file (see {@link ReducedDescription}).
 */
export function githubDescription(): GitHubDescription {
  if (cached) return cached;
  const { version, templates, paths, components } = JSON.parse(
    GITHUB_OPENAPI,
  ) as ReducedDescription;
  const reduced = convert({ paths, components }, false) as Json;
  reduced.$id = "urn:idem:github-description";
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    allowUnionTypes: true,
    validateSchema: false,
  });
  for (const [name, re] of Object.entries(FORMATS)) ajv.addFormat(name, re);
  for (const name of IGNORED_FORMATS) ajv.addFormat(name, true);
  ajv.addFormat("timestamp", true);
  ajv.addSchema(reduced);
  const validators = new Map<string, ValidateFunction>();
  const part = (p: string) => p.replace(/~/g, "~0").replace(/\//g, "~1");
  const reducedComponents = reduced.components as Record<string, Json>;
  cached = {
    version,
    templates,
    operation(method, template) {
      const path = (reduced.paths as Record<string, Json>)[template];
      const op = path?.[method.toLowerCase()];
      return isObject(op) ? op : undefined;
    },
    validator(pointer) {
      const ref = `urn:idem:github-description#/${pointer.map(part).join("/")}`;
      let v = validators.get(ref);
      if (!v) {
        v = ajv.compile({ $ref: ref });
        validators.set(ref, v);
      }
      return v;
    },
    follow(value) {
      let at: Json = value;
      for (let i = 0; i < 10 && typeof at.$ref === "string"; i++) {
        const [section, name] = at.$ref.slice("#/components/".length).split("/") as [
          string,
          string,
        ];
        const next = reducedComponents[section]?.[name];
        if (!isObject(next)) throw new Error(`the description's ${at.$ref} does not resolve`);
        at = next;
      }
      return at;
    },
  };
  return cached;
}

/** ajv's errors as one line each: the field path and what is wrong. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const at = e.instancePath || "(the value)";
    if (e.keyword === "required")
      return `${at}: "${(e.params as { missingProperty: string }).missingProperty}" wasn't supplied`;
    if (e.keyword === "enum")
      return `${at} must be one of ${JSON.stringify((e.params as { allowedValues: unknown }).allowedValues)}`;
    return `${at} ${e.message ?? "is invalid"}`;
  });
}
