// The conformance drill (`idem kinds test sql.exec`, docs/effect-kinds.md) on a PostgreSQL and a
// MariaDB target of the test's own: the samples refused and applied as they must, then outputs
// interpreted under SIGKILLs at every fault point, the interpreter's and sql.exec's own; every key
// once at the target.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQL_FAULT_POINTS } from "../../src/kinds/sql-exec/sql-transaction.js";
import { buildCli, idem } from "./idem-cli.js";
import { createTestDb, sqlOptions, stopPostgres } from "./sql-fixture.js";

beforeAll(buildCli, 300_000);
afterAll(stopPostgres, 60_000);

describe("idem kinds test sql.exec", () => {
  it.each(["postgres", "mysql"] as const)(
    "finds it exactly once in effect on %s",
    async (dialect) => {
      await using db = await createTestDb(dialect);
      const dir = mkdtempSync(join(tmpdir(), "idem-sql-drill-"));
      try {
        writeFileSync(join(dir, "idem.config.json"), JSON.stringify({ sql: sqlOptions(db) }));
        const ran = await idem(dir, ["kinds", "test", "sql.exec", "--json"]);
        const report = JSON.parse(ran.stdout) as {
          verdict: string;
          findings: unknown[];
          counts: Record<string, number>;
          crashes: { points: string[] };
        };
        expect(report.findings).toEqual([]);
        expect(report.verdict).toBe("exactly-once-in-effect");
        expect(ran.code, ran.stderr).toBe(0);
        expect(report.crashes.points).toEqual(
          expect.arrayContaining([SQL_FAULT_POINTS.BEFORE_COMMIT, SQL_FAULT_POINTS.AFTER_COMMIT]),
        );
        expect(report.counts).toMatchObject({ duplicated: 0, missing: 0, uncertain: 0, dead: 0 });
        expect(report.counts.once).toBeGreaterThan(0);
        expect(await db.count("idem_drill")).toBe(await db.count("idem_effects"));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    300_000,
  );
});
