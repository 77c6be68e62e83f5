// Writes docs/schemas/<name>.schema.json from the built @idem/schema (run `npm run schemas` at the
// root, which builds it first). packages/schema/test/json-schemas.test.ts fails when they are stale.
import { writeFileSync } from "node:fs";
import { JSON_SCHEMA_NAMES, jsonSchemaText } from "../dist/index.js";

const dir = new URL("../../../docs/schemas/", import.meta.url);
for (const name of JSON_SCHEMA_NAMES) {
  const file = new URL(`${name}.schema.json`, dir);
  writeFileSync(file, jsonSchemaText(name));
  console.log(`wrote ${file.pathname}`);
}
