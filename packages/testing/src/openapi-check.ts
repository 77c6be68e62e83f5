/**
 * Checks real HTTP responses against an OpenAPI 3.1 document: the route and status are listed,
 * the Content-Type is one the document names, the body matches the schema (JSON Schema 2020-12,
 * by ajv) and the required headers are there. For the API tests: a response the document does
 * not describe fails them.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/** The request a response answers: its method and its URL path (no query). */
export interface CheckedRequest {
  method: string;
  path: string;
}

/** A checker of responses against one OpenAPI document. */
export interface OpenApiChecker {
  /**
   * Checks `response` (read from a clone, so the caller can still read its body) as the answer to
   * `request`, and records it in {@link seen}.
   * @throws Error naming the route, the status and each mismatch (the field path and why).
   */
  check(request: CheckedRequest, response: Response): Promise<Response>;
  /** `fetch`, with every response checked by {@link check} before it is returned. */
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
  /** Each response checked so far, as `METHOD /template STATUS` (`GET /v1/outputs/{jobId} 404`). */
  readonly seen: ReadonlySet<string>;
  /** Every response the document lists, as `METHOD /template STATUS`. */
  documented(): string[];
  /** Every operation the document lists, as `METHOD /template` (`GET /v1/outputs/{jobId}`). */
  operations(): string[];
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
const DOC_ID = "urn:idem:openapi-under-check";
/** The OpenAPI document's own keys: no-op keywords to ajv, which reads it as one schema. */
const OPENAPI_KEYS = [
  "openapi",
  "info",
  "jsonSchemaDialect",
  "servers",
  "security",
  "tags",
  "paths",
  "components",
  "webhooks",
  "externalDocs",
];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const pointerPart = (part: string) => part.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * A checker of responses against `document`, an OpenAPI 3.1 document whose schemas use JSON
 * Schema 2020-12 (`$ref`s into `#/components/...` are followed). Formats are not checked (zod's
 * documents carry a pattern beside each format).
 * @throws Error from ajv when the document's schemas do not compile.
 */
export function createOpenApiChecker(document: Json): OpenApiChecker {
  const ajv = new Ajv2020({
    strict: true,
    allErrors: true,
    allowUnionTypes: true,
    validateFormats: false,
  });
  ajv.addVocabulary(OPENAPI_KEYS);
  ajv.addSchema(document, DOC_ID);
  const validators = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string[]) => {
    const ref = `${DOC_ID}#/${pointer.map(pointerPart).join("/")}`;
    let v = validators.get(ref);
    if (!v) {
      v = ajv.compile({ $ref: ref });
      validators.set(ref, v);
    }
    return v;
  };
  const paths = (isObject(document.paths) ? document.paths : {}) as Record<string, Json>;
  const templates = Object.keys(paths);
  const seen = new Set<string>();
  const listed = templates.flatMap((template) =>
    METHODS.flatMap((method) => {
      const operation = paths[template]?.[method];
      return isObject(operation) ? [{ method, template, operation }] : [];
    }),
  );

  /** The object at a local `$ref` (`#/components/responses/X`), and its pointer. */
  const follow = (value: Json, pointer: string[]): { value: Json; pointer: string[] } => {
    const ref = value.$ref;
    if (typeof ref !== "string") return { value, pointer };
    if (!ref.startsWith("#/")) throw new Error(`only local $refs are followed, not ${ref}`);
    const parts = ref
      .slice(2)
      .split("/")
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
    let at: unknown = document;
    for (const p of parts) at = isObject(at) ? at[p] : undefined;
    if (!isObject(at)) throw new Error(`the document's ${ref} does not resolve`);
    return follow(at, parts);
  };

  const templateOf = (path: string): string | undefined => {
    if (paths[path]) return path;
    return templates.find((t) => {
      const re = new RegExp(
        `^${t
          .split(/\{[^}]+\}/)
          .map((s) => s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
          .join("[^/]+")}$`,
      );
      return re.test(path);
    });
  };

  const problems = (v: ValidateFunction) =>
    (v.errors ?? []).map((e) => `  ${e.instancePath || "(body)"} ${e.message ?? ""}`).join("\n");

  async function check(request: CheckedRequest, response: Response): Promise<Response> {
    const method = request.method.toLowerCase();
    const route = `${request.method.toUpperCase()} ${request.path}`;
    const template = templateOf(request.path);
    if (!template) throw new Error(`${route}: no path of the document matches ${request.path}`);
    const operation = paths[template]?.[method];
    if (!isObject(operation))
      throw new Error(`${route}: the document has no ${method} on ${template}`);
    const responses = isObject(operation.responses) ? operation.responses : {};
    const status = String(response.status);
    const key = [status, `${status[0]}XX`, "default"].find((k) => isObject(responses[k]));
    const label = `${request.method.toUpperCase()} ${template} ${status}`;
    if (!key) {
      throw new Error(
        `${label}: the document does not list this status (it lists ${Object.keys(responses).join(", ")})`,
      );
    }
    const { value: answer, pointer } = follow(responses[key] as Json, [
      "paths",
      template,
      method,
      "responses",
      key,
    ]);
    const wrong: string[] = [];
    for (const [name, header] of Object.entries(isObject(answer.headers) ? answer.headers : {})) {
      const h = follow(header as Json, [...pointer, "headers", name]);
      const value = response.headers.get(name);
      if (value === null) {
        if (h.value.required === true) wrong.push(`  the header ${name} is missing`);
        continue;
      }
      if (isObject(h.value.schema)) {
        const v = validatorAt([...h.pointer, "schema"]);
        if (!v(value)) wrong.push(`  the header ${name}: ${problems(v).trim()}`);
      }
    }
    const content = isObject(answer.content) ? answer.content : undefined;
    const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    const text = await response.clone().text();
    if (content) {
      const mediaType = [type ?? "", `${type?.split("/")[0]}/*`, "*/*"].find((t) =>
        isObject(content[t]),
      );
      if (!mediaType) {
        wrong.push(
          `  the Content-Type ${type || "(none)"} is not one the document names (${Object.keys(content).join(", ")})`,
        );
      } else if (isObject((content[mediaType] as Json).schema)) {
        const isJson = mediaType === "application/json" || mediaType.endsWith("+json");
        let body: unknown = text;
        let parsed = true;
        if (isJson) {
          try {
            body = JSON.parse(text);
          } catch (e) {
            if (!(e instanceof SyntaxError)) throw e;
            parsed = false;
            wrong.push(`  the body is not JSON: ${text.slice(0, 200)}`);
          }
        }
        const v = validatorAt([...pointer, "content", mediaType, "schema"]);
        if (parsed && !v(body)) wrong.push(problems(v));
      }
    } else if (text.length > 0) {
      wrong.push("  the document describes no body, and the response has one");
    }
    seen.add(label);
    if (wrong.length > 0) {
      throw new Error(`${label} does not match the document:\n${wrong.join("\n")}\nbody: ${text}`);
    }
    return response;
  }

  return {
    check,
    async fetch(input, init) {
      const url = new URL(input);
      const response = await fetch(url, init);
      return check({ method: init?.method ?? "GET", path: url.pathname }, response);
    },
    seen,
    documented() {
      return listed.flatMap(({ method, template, operation }) => {
        const responses = isObject(operation.responses) ? operation.responses : {};
        return Object.keys(responses).map((s) => `${method.toUpperCase()} ${template} ${s}`);
      });
    },
    operations() {
      return listed.map(({ method, template }) => `${method.toUpperCase()} ${template}`);
    },
  };
}
