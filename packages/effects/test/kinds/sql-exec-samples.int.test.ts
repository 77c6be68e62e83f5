// The samples the conformance drill takes from sql.exec: the invalid ones are refused naming their
// field, and the valid ones are distinct effects that apply once each on a target `db` defining
// the `drill` statement (docs/kinds/sql.md, "The conformance drill"), on PostgreSQL and MariaDB.
import { openKind } from "@idem/kit";
import { afterAll, describe, expect, it } from "vitest";
import { sqlExecKind } from "../../src/kinds/sql-exec/sql-exec-kind.js";
import { expectIdemError, fieldOf, interpret } from "./kind-calls.js";
import { createTestDb, sqlOptions, statementsOf, stopPostgres } from "./sql-fixture.js";

afterAll(stopPostgres, 60_000);

describe("sql.exec's samples", () => {
  it("refuse every invalid sample, naming its field", () => {
    const options = {
      targets: {
        db: {
          dialect: "postgres",
          url: "postgres://app@db/x",
          statements: statementsOf("postgres"),
        },
      },
    };
    const k = openKind(sqlExecKind, { options, env: {} });
    expect(sqlExecKind.samples?.invalid.length).toBeGreaterThan(0);
    for (const sample of sqlExecKind.samples?.invalid ?? []) {
      let e: unknown;
      try {
        k.check(sample.spec);
      } catch (err) {
        e = err;
      }
      expectIdemError(e, "INVALID_INPUT");
      expect(fieldOf(e), JSON.stringify(sample.spec)).toBe(sample.field);
    }
  });

  it.each(["postgres", "mysql"] as const)(
    "apply three distinct valid samples once each on %s",
    async (dialect) => {
      await using db = await createTestDb(dialect);
      const k = openKind(sqlExecKind, { options: sqlOptions(db), env: {} });
      try {
        const since = Date.now();
        const specs = [0, 1, 2].map((i) => k.check(sqlExecKind.samples?.valid(i, k.context)));
        expect(new Set(specs.map((s) => JSON.stringify(s))).size).toBe(3);
        for (const [i, s] of specs.entries())
          expect((await interpret(k, s, `drill-${i}/0`, since)).outcome).toBe("applied");
        for (const [i, s] of specs.entries())
          expect((await interpret(k, s, `drill-${i}/0`, since)).outcome).toBe("present");
        expect(await db.count("idem_drill")).toBe(3);
        const keys = await k.scan(specs[0] as never);
        for (const i of [0, 1, 2]) expect(keys?.get(`drill-${i}/0`)).toEqual(["sql:db"]);
      } finally {
        await k.close();
      }
    },
  );
});
