// Nothing loads pg or mysql2 until a sql target is used, and a PostgreSQL target loads pg only
// (docs/kinds/sql.md): a process that never applies sql.exec pays nothing for it.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const REPO_ROOT = resolve(import.meta.dirname, "../../../..");

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "packages/effects"], { cwd: REPO_ROOT, stdio: "pipe" });
}, 300_000);

const SCRIPT = `
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const drivers = () => [...new Set(Object.keys(require.cache).map((k) => /node_modules\\/(pg|mysql2)\\//.exec(k)?.[1]).filter(Boolean))].sort();
const { BUILT_IN_KINDS, createEffects, sqlExecKind } = await import("@idem/effects");
const { openKind } = await import("@idem/kit");
const { defaultConfig } = await import("@idem/schema");
const seen = { imported: drivers() };
const effects = createEffects(defaultConfig(process.cwd()));
await effects.close();
seen.effects = drivers();
const k = openKind(sqlExecKind, {
  options: { targets: { db: { dialect: "postgres", url: "postgres://x@127.0.0.1:1/x", timeoutMs: 1000, statements: { s: { sql: "SELECT 1" } } } } },
  env: {},
});
const spec = k.check({ kind: "sql.exec", target: "db", statements: [{ name: "s" }] });
seen.probe = await k.probe(spec, "j/0").then(() => "answered", (e) => e.code);
await k.close();
seen.postgres = drivers();
seen.kinds = BUILT_IN_KINDS.length;
console.log(JSON.stringify(seen));
`;

describe("sql.exec's drivers", () => {
  it("are loaded only when a target of their dialect is used", () => {
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", SCRIPT], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect(JSON.parse(out)).toEqual({
      imported: [],
      effects: [],
      probe: "UNAVAILABLE",
      postgres: ["pg"],
      kinds: expect.any(Number),
    });
  });
});
