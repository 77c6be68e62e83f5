/**
 * The OpenAPI 3.1 document of the executor's HTTP API, built from the zod schemas (records.ts for
 * the request bodies, http-api.ts for the answers) with zod's own `z.toJSONSchema`: OpenAPI 3.1
 * uses JSON Schema 2020-12, so the generated schemas are its component schemas as they are. Only
 * the paths (routes, status codes, parameters) are written here. Pure: `npm run schemas` writes it
 * to `docs/openapi.json`, and the executor serves it at `GET /v1/openapi.json`.
 */
import type { EffectSchemas } from "./json-schemas.js";
import { approvalPaths } from "./openapi-approvals.js";
import { type ComponentName, componentSchemas } from "./openapi-components.js";

/**
 * The version of the HTTP API contract (`info.version`), not of the packages: bumped by hand when
 * the routes or their bodies change (the minor for an addition, the major with a `/v2`), so a
 * package release alone leaves `docs/openapi.json` as it is.
 */
export const HTTP_API_VERSION = "1.3.0";

/** An OpenAPI document as a plain JSON object. */
export type OpenApiDocument = Record<string, unknown>;

const schemaRef = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: ComponentName, description: string) => ({
  description,
  content: { "application/json": { schema: schemaRef(name) } },
});
const responseRef = (name: keyof typeof RESPONSES) => ({ $ref: `#/components/responses/${name}` });

/** The answers several routes share. */
const RESPONSES = {
  Unauthorized: {
    description:
      "`api.token` is set and the request does not carry it as `Authorization: Bearer <api.token>`.",
    headers: {
      "WWW-Authenticate": {
        description: 'The scheme the API expects: `Bearer realm="idem"`.',
        required: true,
        schema: { type: "string", const: 'Bearer realm="idem"' },
      },
    },
    content: { "application/json": { schema: schemaRef("Error") } },
  },
  PayloadTooLarge: json("Error", "The body is larger than `api.maxBodyBytes` (default 1,048,576)."),
  UnsupportedMediaType: {
    description:
      "The body is not declared `Content-Type: application/json` (a web page's form can post " +
      "text/plain cross-site without asking; it cannot post JSON so): nothing read.",
    headers: {
      "Accept-Post": {
        description: "The media type the route takes.",
        required: true,
        schema: { type: "string", const: "application/json" },
      },
    },
    content: { "application/json": { schema: schemaRef("Error") } },
  },
  CrossSite: json(
    "Error",
    "A browser's cross-site request (`Sec-Fetch-Site` other than `same-origin` or `none`, or an " +
      "`Origin` other than the API's own): refused, nothing read or written.",
  ),
  Forbidden: json(
    "Error",
    "A browser's cross-site request (`Sec-Fetch-Site` other than `same-origin` or `none`, or an " +
      "`Origin` other than the API's own), or an agent's token (`credentials.<agent>`) asking " +
      "for what only the operator's token may do or another agent's record: refused, nothing " +
      "read or written.",
  ),
  MisdirectedRequest: json(
    "Error",
    "The API listens on loopback without `api.token` and the `Host` header names something " +
      "else (a DNS-rebinding page): refused, nothing read or written.",
  ),
  JournalFailed: json(
    "ServiceUnavailable",
    "The journal failed: nothing is half-recorded, and the same request may be sent again.",
  ),
} as const;

const PARAMETERS = {
  traceparent: {
    name: "traceparent",
    in: "header",
    required: false,
    description:
      "W3C Trace Context (https://www.w3.org/TR/trace-context/): the caller's trace, for the " +
      "executor's spans of this request to continue when tracing is on. Optional.",
    schema: {
      type: "string",
      pattern: "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$",
      examples: ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],
    },
  },
  jobId: {
    name: "jobId",
    in: "path",
    required: true,
    description: "The job ID whose output to read.",
    schema: schemaRef("JobId"),
  },
} as const;
const parameterRef = (name: keyof typeof PARAMETERS) => ({
  $ref: `#/components/parameters/${name}`,
});

/** Open routes: no token, whatever `api.token` says. */
const OPEN = { security: [] } as const;

function paths(): Record<string, unknown> {
  return {
    "/v1/outputs": {
      post: {
        tags: ["outputs"],
        operationId: "submitOutput",
        summary: "Record one AgentOutput",
        description:
          "Validates the output against the schema and the executor's config and records it in " +
          "the journal, first write wins. Safe to repeat: after a lost answer, send the same body " +
          "again and take `duplicate` as success. The body must be sent as `Content-Type: " +
          "application/json`.",
        parameters: [parameterRef("traceparent")],
        requestBody: {
          required: true,
          content: { "application/json": { schema: schemaRef("AgentOutput") } },
        },
        responses: {
          "403": {
            description:
              "A browser's cross-site request (`Error`), or an output the caller's agent token " +
              "may not record (`SubmitForbidden`: another agent's name or job, an effect outside " +
              "its scope): nothing written.",
            content: {
              "application/json": {
                schema: { oneOf: [schemaRef("Error"), schemaRef("SubmitForbidden")] },
              },
            },
          },
          "421": responseRef("MisdirectedRequest"),
          "415": responseRef("UnsupportedMediaType"),
          "200": json("SubmitDuplicate", "The same content was recorded before: nothing written."),
          "201": json("SubmitRecorded", "Recorded now."),
          "400": json("SubmitInvalid", "Invalid: nothing written; each issue names its field."),
          "401": responseRef("Unauthorized"),
          "409": json(
            "SubmitConflict",
            "Other content was recorded first for this job ID: refused, kept in the rejections.",
          ),
          "413": responseRef("PayloadTooLarge"),
          "503": responseRef("JournalFailed"),
        },
      },
    },
    "/v1/jobs": {
      post: {
        tags: ["jobs"],
        operationId: "enqueueJob",
        summary: "Enqueue one Job",
        description:
          "Enqueues the job as `idem enqueue` does: onto JetStream with `Nats-Msg-Id` = `jobId` " +
          "when the executor runs on NATS, else into the journal's queue. Safe to repeat.",
        parameters: [parameterRef("traceparent")],
        requestBody: {
          required: true,
          content: { "application/json": { schema: schemaRef("Job") } },
        },
        responses: {
          "403": responseRef("Forbidden"),
          "421": responseRef("MisdirectedRequest"),
          "415": responseRef("UnsupportedMediaType"),
          "200": json("JobAlreadyEnqueued", "The same job was enqueued before."),
          "201": json("JobEnqueued", "Enqueued now."),
          "400": json(
            "JobProblems",
            "An invalid job, a batch, or, on the embedded queue, an agent the config does not " +
              "know (`unknown-agent`): nothing enqueued.",
          ),
          "401": responseRef("Unauthorized"),
          "409": json("Error", "The job ID is already enqueued with another input."),
          "413": responseRef("PayloadTooLarge"),
          "501": json(
            "Error",
            "On JetStream, when the API is served without the executor's publisher.",
          ),
          "503": json(
            "ServiceUnavailable",
            "The stream gave no PubAck (the job stays in the outbox and is republished) or the " +
              "journal failed.",
          ),
        },
      },
    },
    "/v1/outputs/{jobId}": {
      get: {
        tags: ["outputs"],
        operationId: "getOutput",
        summary: "The recorded output of one job",
        parameters: [parameterRef("jobId")],
        responses: {
          "403": responseRef("Forbidden"),
          "421": responseRef("MisdirectedRequest"),
          "200": json("OutputRecord", "The output as recorded; its effects' progress is not here."),
          "400": json("Error", "`jobId` is not a job ID."),
          "401": responseRef("Unauthorized"),
          "404": json("Error", "No output is recorded for this job (yet)."),
          "503": responseRef("JournalFailed"),
        },
      },
    },
    "/v1/status": {
      get: {
        tags: ["operations"],
        operationId: "getStatus",
        summary: "The journal's counts, as `idem status --json` prints them",
        responses: {
          "403": responseRef("CrossSite"),
          "421": responseRef("MisdirectedRequest"),
          "200": json("StatusReport", "The counts."),
          "401": responseRef("Unauthorized"),
          "503": responseRef("JournalFailed"),
        },
      },
    },
    "/v1/openapi.json": {
      get: {
        tags: ["operations"],
        operationId: "getOpenApi",
        summary: "This document",
        description:
          "Open like `/healthz`, so that tools can fetch it without the token: it holds nothing " +
          "that is not in `docs/openapi.json`.",
        ...OPEN,
        responses: {
          "403": responseRef("CrossSite"),
          "421": responseRef("MisdirectedRequest"),
          "200": {
            description: "The OpenAPI 3.1 document of this API.",
            content: { "application/json": { schema: { type: "object" } } },
          },
        },
      },
    },
    "/healthz": {
      get: {
        tags: ["operations"],
        operationId: "getHealth",
        summary: "Liveness",
        ...OPEN,
        responses: {
          "403": responseRef("CrossSite"),
          "421": responseRef("MisdirectedRequest"),
          "200": json("Healthy", "The journal can make writes durable."),
          "503": json(
            "Unhealthy",
            "The journal can no longer make a write durable; the process exits so that its " +
              "supervisor restarts it.",
          ),
        },
      },
    },
    "/metrics": {
      get: {
        tags: ["operations"],
        operationId: "getMetrics",
        summary: "Prometheus metrics",
        ...OPEN,
        responses: {
          "403": responseRef("CrossSite"),
          "421": responseRef("MisdirectedRequest"),
          "200": {
            description:
              "Prometheus text format: the journal's gauges, read on each scrape, and the " +
              "executor's counters and histograms.",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          "503": responseRef("JournalFailed"),
        },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document of the executor's HTTP API: every route, each status code it can
 * answer with its body's schema, the request bodies (AgentOutput, Job), the path parameter, the
 * optional `traceparent` header and the bearer token.
 *
 * Deterministic and pure, like {@link jsonSchemaOf}: `docs/openapi.json` is checked against it.
 * @throws Error from zod when a schema gains a type JSON Schema cannot represent.
 */
export function openApiDocument(options: EffectSchemas = {}): OpenApiDocument {
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "idem executor HTTP API",
      version: HTTP_API_VERSION,
      summary: "Submit agent outputs, enqueue jobs and read what the journal recorded.",
      description:
        "Served by `idem executor` on `api.host:api.port` (default 127.0.0.1:7070). Bodies are " +
        "JSON unless said otherwise. Every route under `/v1/` but `/v1/openapi.json` needs " +
        "`Authorization: Bearer <api.token>` when the config sets `api.token`. Any other path " +
        "answers 404 in plain text. Every route refuses a browser's cross-site request (403) and, " +
        "on a loopback address without a token, a `Host` that is not a loopback name (421). The " +
        "agent contract: docs/agents.md.",
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    servers: [
      {
        url: "http://{host}:{port}",
        description: "An executor's API (`api.host`, `api.port`).",
        variables: { host: { default: "127.0.0.1" }, port: { default: "7070" } },
      },
    ],
    security: [{ bearer: [] }],
    tags: [
      { name: "outputs", description: "Agent outputs: submit one, read one." },
      { name: "jobs", description: "Enqueue jobs." },
      { name: "operations", description: "Status, health, metrics and this document." },
      {
        name: "approvals",
        description: "Runs awaiting a person's approval, and the decisions (docs/approvals.md).",
      },
    ],
    paths: {
      ...paths(),
      ...approvalPaths({
        json,
        responseRef: (name) => responseRef(name as keyof typeof RESPONSES),
        parameterRef: (name) => parameterRef(name as keyof typeof PARAMETERS),
      }),
    },
    components: {
      schemas: componentSchemas(options),
      responses: RESPONSES,
      parameters: PARAMETERS,
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description:
            "`api.token` of the executor's config (every right), or an agent's own token " +
            "(`credentials.<agent>.tokenEnv`): that agent's outputs only, for its own jobs, " +
            "within its scope; no enqueue. With `api.token` null (the default) no token is " +
            "checked: keep `api.host` on a loopback or private address then.",
        },
      },
    },
  };
}

/** The published text of {@link openApiDocument}: two-space indented JSON with a final newline. */
export function openApiText(options: EffectSchemas = {}): string {
  return `${JSON.stringify(openApiDocument(options), null, 2)}\n`;
}
