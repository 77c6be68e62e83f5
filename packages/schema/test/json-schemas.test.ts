import { readFileSync } from "node:fs";
import { BUILT_IN_KINDS } from "@idem/effects";
import { describe, expect, it } from "vitest";
import { JSON_SCHEMA_NAMES, jsonSchemaOf, jsonSchemaText } from "../src/index.js";

// Each effect of an output is one of the built-in kinds' specs (packages/effects/scripts).
const effects = BUILT_IN_KINDS.map((k) => k.spec);

const committed = (name: string) =>
  readFileSync(new URL(`../../../docs/schemas/${name}.schema.json`, import.meta.url), "utf8");

describe("the JSON Schemas under docs/schemas", () => {
  it.each(JSON_SCHEMA_NAMES)(
    "%s.schema.json is what `npm run schemas` generates from the zod schema today",
    (name) => {
      expect(
        committed(name),
        `docs/schemas/${name}.schema.json is stale: run \`npm run schemas\` and commit it`,
      ).toBe(jsonSchemaText(name, { effects }));
    },
  );

  it("describe the input form: optional fields and defaults are not required", () => {
    const job = jsonSchemaOf("job");
    expect(job.required).toEqual(["jobId", "agent", "input"]);
    expect(job.additionalProperties).toBe(false);
    expect(jsonSchemaOf("agent-output", { effects }).required).toEqual([
      "jobId",
      "agent",
      "effects",
    ]);
  });

  it("name the one JSON value definition instead of repeating it per field", () => {
    const defs = jsonSchemaOf("agent-output", { effects }).$defs as Record<string, unknown>;
    expect(Object.keys(defs)).toEqual(["JsonValue"]);
  });
});
