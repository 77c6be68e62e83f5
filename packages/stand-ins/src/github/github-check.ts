/**
 * Checks each request the GitHub stand-in receives against the operation GitHub's description
 * names for it (path and query parameters, the JSON body) and each answer it gives against the
 * operation's response for that status. Problems are of two sorts: `rejected` ones GitHub answers
 * with an error (a body that does not match, a missing `q`), `ignored` ones GitHub lets pass
 * silently (an unknown query parameter or body field, which a client must not count on).
 */
import { describeErrors, type GitHubDescription } from "./github-description.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A path of the description matched by a request path. */
export interface MatchedPath {
  template: string;
  params: Record<string, string>;
}

/** What {@link checkRequest} found: the coerced parameters and body, and the problems. */
export interface CheckedRequest {
  path: Record<string, string | number>;
  query: Record<string, string | number | boolean>;
  body: Json;
  /** Problems GitHub refuses the request for (answered 422; 404 for a bad path parameter). */
  rejected: string[];
  /** True when a path parameter did not validate: GitHub's router answers 404. */
  badPath: boolean;
  /** Problems GitHub lets pass silently: unknown query parameters and body fields. */
  ignored: string[];
}

/** The answers GitHub gives on any operation, described or not: checked as a `basic-error`. */
const CROSS_CUTTING = new Set([401, 403, 404, 429, 500, 502, 503]);

/** A matcher of request paths to the description's templates (literal segments win). */
export function createPathMatcher(description: GitHubDescription, multiSegment: Set<string>) {
  const compiled = description.templates.map((template) => {
    const names: string[] = [];
    const source = template
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const m = /^\{([^}]+)\}$/.exec(part);
        if (!m?.[1]) return part.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
        names.push(m[1]);
        return multiSegment.has(`${template} ${m[1]}`) ? "(.+)" : "([^/]+)";
      })
      .join("");
    const literal = template.split("/").filter((s) => s && !s.startsWith("{")).length;
    return { template, names, re: new RegExp(`^${source}$`), literal };
  });
  compiled.sort((a, b) => b.literal - a.literal);
  return (path: string): MatchedPath | undefined => {
    for (const c of compiled) {
      const m = c.re.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      c.names.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] ?? "");
      });
      return { template: c.template, params };
    }
    return undefined;
  };
}

/** The `template param` keys of the served operations' `x-multi-segment` path parameters. */
export function multiSegmentParams(
  description: GitHubDescription,
  served: readonly (readonly [string, string])[],
): Set<string> {
  const out = new Set<string>();
  for (const [method, template] of served) {
    for (const p of parameters(description, method, template)) {
      if (p.value["x-multi-segment"] === true) out.add(`${template} ${String(p.value.name)}`);
    }
  }
  return out;
}

interface Parameter {
  value: Json;
  /** Where its schema is, for the validator. */
  schemaAt: string[];
}

function parameters(description: GitHubDescription, method: string, template: string) {
  const op = description.operation(method, template);
  const list = Array.isArray(op?.parameters) ? (op.parameters as Json[]) : [];
  return list.map((p, i): Parameter => {
    if (typeof p.$ref === "string") {
      const name = p.$ref.split("/").pop() ?? "";
      return {
        value: description.follow(p),
        schemaAt: ["components", "parameters", name, "schema"],
      };
    }
    return { value: p, schemaAt: ["paths", template, method, "parameters", String(i), "schema"] };
  });
}

function coerce(raw: string, schema: unknown): string | number | boolean {
  const types = isObject(schema) ? [schema.type].flat() : [];
  if ((types.includes("integer") || types.includes("number")) && /^-?\d+(\.\d+)?$/.test(raw))
    return Number(raw);
  if (types.includes("boolean") && (raw === "true" || raw === "false")) return raw === "true";
  return raw;
}

/**
 * Checks a request: `pathParams` from {@link createPathMatcher}, the query, and the body (already
 * parsed from JSON; `undefined` when there was none).
 */
export function checkRequest(
  description: GitHubDescription,
  method: string,
  template: string,
  pathParams: Record<string, string>,
  query: URLSearchParams,
  body: unknown,
): CheckedRequest {
  const out: CheckedRequest = {
    path: {},
    query: {},
    body: {},
    rejected: [],
    badPath: false,
    ignored: [],
  };
  const declared = new Set<string>();
  for (const p of parameters(description, method, template)) {
    const name = String(p.value.name);
    const where = p.value.in;
    if (where === "path") {
      const value = coerce(pathParams[name] ?? "", p.value.schema);
      const v = description.validator(p.schemaAt);
      if (!v(value)) {
        out.badPath = true;
        out.rejected.push(`path parameter ${name}: ${describeErrors(v.errors).join("; ")}`);
      }
      out.path[name] = value as string | number;
    } else if (where === "query") {
      declared.add(name);
      const raw = query.get(name);
      if (raw === null) {
        if (p.value.required === true)
          out.rejected.push(`query parameter "${name}" wasn't supplied`);
        continue;
      }
      if (query.getAll(name).length > 1)
        out.ignored.push(`query parameter "${name}" given more than once: GitHub reads one`);
      const value = coerce(raw, p.value.schema);
      const v = description.validator(p.schemaAt);
      if (!v(value))
        out.rejected.push(
          `query parameter ${name}=${JSON.stringify(raw)}: ${describeErrors(v.errors).join("; ")}`,
        );
      out.query[name] = value;
    }
  }
  for (const name of new Set(query.keys())) {
    if (!declared.has(name))
      out.ignored.push(`unknown query parameter "${name}": GitHub ignores it`);
  }
  const op = description.operation(method, template);
  const requestBody = isObject(op?.requestBody) ? op.requestBody : undefined;
  if (requestBody) {
    const value = body === undefined ? {} : body;
    const content = isObject(requestBody.content) ? requestBody.content : {};
    const schema = isObject(content["application/json"])
      ? (content["application/json"] as Json).schema
      : undefined;
    const pointer = ["paths", template, method, "requestBody", "content", "application/json"];
    const v = description.validator([...pointer, "schema"]);
    if (!v(value)) out.rejected.push(...describeErrors(v.errors).map((e) => `body ${e}`));
    if (isObject(value)) {
      out.body = value;
      const known = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
      for (const field of Object.keys(value)) {
        if (!(field in known)) out.ignored.push(`unknown body field "${field}": GitHub ignores it`);
      }
    }
  } else if (body !== undefined) {
    out.ignored.push("a body on an operation that takes none: GitHub ignores it");
  }
  return out;
}

/**
 * Checks an answer against the operation's response for `status` (or GitHub's `basic-error` for
 * the statuses every operation can answer): the headers the description names and the JSON body.
 * Answers the problems, none when it matches.
 */
export function checkResponse(
  description: GitHubDescription,
  method: string,
  template: string,
  status: number,
  headers: Record<string, string>,
  body: unknown,
): string[] {
  const op = description.operation(method, template);
  const responses = isObject(op?.responses) ? op.responses : {};
  const key = [String(status), "default"].find((k) => isObject(responses[k]));
  if (!key) {
    if (!CROSS_CUTTING.has(status))
      return [`status ${status} is not one the description lists for ${method} ${template}`];
    const v = description.validator(["components", "schemas", "basic-error"]);
    return v(body) ? [] : describeErrors(v.errors).map((e) => `body ${e}`);
  }
  const wrong: string[] = [];
  const answer = description.follow(responses[key] as Json);
  const responseRef = (responses[key] as Json).$ref;
  const base =
    typeof responseRef === "string"
      ? ["components", "responses", responseRef.split("/").pop() ?? ""]
      : ["paths", template, method, "responses", key];
  for (const [name, header] of Object.entries(isObject(answer.headers) ? answer.headers : {})) {
    const h = description.follow(header as Json);
    const value = headers[name.toLowerCase()];
    if (value === undefined) {
      if (h.required === true) wrong.push(`the header ${name} is missing`);
      continue;
    }
    if (isObject(h.schema) && h.schema.type === "string" && typeof value !== "string")
      wrong.push(`the header ${name} is not a string`);
  }
  const content = isObject(answer.content) ? answer.content : undefined;
  if (content && isObject(content["application/json"])) {
    const v = description.validator([...base, "content", "application/json", "schema"]);
    if (!v(body)) wrong.push(...describeErrors(v.errors).map((e) => `body ${e}`));
  } else if (body !== undefined && status !== 304) {
    wrong.push(`status ${status} of ${method} ${template} has no body in the description`);
  }
  return wrong;
}
