import { readFileSync } from "node:fs";
import { BUILT_IN_KINDS } from "@idem/effects";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import {
  HTTP_API_VERSION,
  jsonSchemaOf,
  OutputRecordSchema,
  openApiDocument,
  openApiText,
  StatusReportSchema,
  SubmitInvalidSchema,
} from "../src/index.js";

// Each effect of an output is one of the built-in kinds' specs (packages/effects/scripts).
const effects = BUILT_IN_KINDS.map((k) => k.spec);

const committed = () =>
  readFileSync(new URL("../../../docs/openapi.json", import.meta.url), "utf8");

type Json = Record<string, unknown>;
const doc = openApiDocument({ effects });
const paths = doc.paths as Record<string, Record<string, Json>>;
const operations = Object.entries(paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
);

describe("the OpenAPI document of the HTTP API", () => {
  it("docs/openapi.json is what `npm run schemas` generates from the zod schemas today", () => {
    expect(committed(), "docs/openapi.json is stale: run `npm run schemas` and commit it").toBe(
      openApiText({ effects }),
    );
  });

  it("validates as OpenAPI 3.1", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("is refused by the same validator when a response loses its description", async () => {
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, Json>> };
    const responses = broken.paths["/v1/status"]?.get?.responses as Record<string, Json>;
    delete responses["200"]?.description;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("has component schemas that compile as JSON Schema 2020-12 and resolve every $ref", () => {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, validateFormats: false });
    const text = JSON.stringify(doc).replaceAll('"#/components/schemas/', '"urn:idem:c#/$defs/');
    const rewritten = JSON.parse(text) as { components: { schemas: Record<string, Json> } };
    ajv.addSchema({ $id: "urn:idem:c", $defs: rewritten.components.schemas });
    for (const name of Object.keys(rewritten.components.schemas)) {
      expect(() => ajv.compile({ $ref: `urn:idem:c#/$defs/${name}` }), name).not.toThrow();
    }
  });

  it("asks every /v1 route but the document itself for the bearer token, and lists its 401", () => {
    expect(doc.security).toEqual([{ bearer: [] }]);
    for (const { route, op } of operations) {
      const open = !route.includes(" /v1/") || route === "GET /v1/openapi.json";
      expect(op.security, route).toEqual(open ? [] : undefined);
      expect(Object.keys(op.responses as Json).includes("401"), route).toBe(!open);
    }
  });

  it("takes the request body and a 413 on every POST, a traceparent header on those that record", () => {
    const posts = operations.filter((o) => o.route.startsWith("POST "));
    expect(posts.map((p) => p.route).sort()).toEqual([
      "POST /v1/approvals/{jobId}/approve",
      "POST /v1/approvals/{jobId}/reject",
      "POST /v1/jobs",
      "POST /v1/outputs",
    ]);
    for (const { route, op } of posts) {
      if (!route.includes("approvals"))
        expect(op.parameters, route).toContainEqual({
          $ref: "#/components/parameters/traceparent",
        });
      expect(op.requestBody, route).toMatchObject({ required: true });
      expect(Object.keys(op.responses as Json), route).toContain("413");
    }
    const body = (route: string) =>
      (operations.find((o) => o.route === route)?.op.requestBody as Json | undefined)?.content;
    expect(body("POST /v1/outputs")).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/AgentOutput" } },
    });
    expect(body("POST /v1/jobs")).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/Job" } },
    });
  });

  it("describes the records as docs/schemas does, with the shared parts as components", () => {
    const components = (doc.components as { schemas: Record<string, Json> }).schemas;
    const job = jsonSchemaOf("job");
    expect(components.Job?.required).toEqual(job.required);
    expect(Object.keys(components.Job?.properties as Json)).toEqual(
      Object.keys(job.properties as Json),
    );
    expect(components.Job?.description).toBe(job.description);
    expect(components.AgentOutput?.description).toBe(
      jsonSchemaOf("agent-output", { effects }).description,
    );
  });

  it("takes info.version from HTTP_API_VERSION, the contract's version, not a package's", () => {
    expect((doc.info as Json).version).toBe(HTTP_API_VERSION);
    const pkg = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    ) as Json;
    expect(JSON.stringify(doc)).not.toContain(`"version":"${pkg.version}"`);
  });
});

describe("the response schemas", () => {
  it("are closed: a field the server does not send is refused", () => {
    const invalid = { status: "invalid", jobId: null, issues: [{ path: "", message: "x" }] };
    expect(SubmitInvalidSchema.safeParse(invalid).success).toBe(true);
    expect(SubmitInvalidSchema.safeParse({ ...invalid, extra: 1 }).success).toBe(false);
  });

  it("name every state of the status report", () => {
    const zeros = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, 0]));
    const report = {
      outputs: 1,
      rejections: 0,
      rejectedBodies: { perJob: 10, dropped: 0 },
      deadLetters: 0,
      runs: zeros(["pending", "running", "failed", "awaiting", "done", "dead"]),
      effects: zeros(["intended", "applied", "present", "failed", "uncertain", "skipped"]),
      jobs: zeros(["queued", "running", "done", "dead"]),
      jobsWaiting: 0,
    };
    expect(StatusReportSchema.safeParse(report).success).toBe(true);
    const { jobsWaiting: _waiting, ...before12 } = report;
    expect(StatusReportSchema.safeParse(before12).success).toBe(false);
    const { dead: _dead, ...runs } = report.runs;
    expect(StatusReportSchema.safeParse({ ...report, runs }).success).toBe(false);
  });

  it("take the output record with its hash in hex", () => {
    const record = {
      seq: 1,
      jobId: "a",
      agent: "w",
      contentHash: "0".repeat(64),
      output: { jobId: "a", agent: "w", effects: [] },
      source: "http",
      recordedAt: 1,
    };
    expect(OutputRecordSchema.safeParse(record).success).toBe(true);
    expect(OutputRecordSchema.safeParse({ ...record, contentHash: "XYZ" }).success).toBe(false);
  });
});
