// Writes docs/schemas/<name>.schema.json and docs/openapi.json from the built @idem/schema (run
// `npm run schemas` at the root, which builds it first). packages/schema/test/json-schemas.test.ts
// and openapi.test.ts fail when they are stale.
import { writeFileSync } from "node:fs";
import { JSON_SCHEMA_NAMES, jsonSchemaText, openApiText } from "../dist/index.js";

const docs = new URL("../../../docs/", import.meta.url);
for (const name of JSON_SCHEMA_NAMES) {
  const file = new URL(`schemas/${name}.schema.json`, docs);
  writeFileSync(file, jsonSchemaText(name));
  console.log(`wrote ${file.pathname}`);
}
const openapi = new URL("openapi.json", docs);
writeFileSync(openapi, openApiText());
console.log(`wrote ${openapi.pathname}`);
