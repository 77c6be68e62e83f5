// Writes docs/schemas/<name>.schema.json and docs/openapi.json from the built @idem/schema and the
// built-in effect kinds of the built @idem/effects (run `npm run schemas` at the root, which builds
// them first): each effect of an AgentOutput is one of the kinds' spec schemas.
// packages/schema/test/json-schemas.test.ts and openapi.test.ts fail when they are stale.
import { writeFileSync } from "node:fs";
import { JSON_SCHEMA_NAMES, jsonSchemaText, openApiText } from "@idem/schema";
import { BUILT_IN_KINDS } from "../dist/index.js";

const effects = BUILT_IN_KINDS.map((k) => k.spec);
const docs = new URL("../../../docs/", import.meta.url);
for (const name of JSON_SCHEMA_NAMES) {
  const file = new URL(`schemas/${name}.schema.json`, docs);
  writeFileSync(file, jsonSchemaText(name, { effects }));
  console.log(`wrote ${file.pathname}`);
}
const openapi = new URL("openapi.json", docs);
writeFileSync(openapi, openApiText({ effects }));
console.log(`wrote ${openapi.pathname}`);
