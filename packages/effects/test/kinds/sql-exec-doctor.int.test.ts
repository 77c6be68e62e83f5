// `idem doctor`'s check of sql targets (the kind's doctor hook) against the real databases: what
// it finds, keyed by the config key at fault, and that it changes nothing at the target.
import { DEFAULT_KIND_LIMITS, type DoctorContext } from "@idem/kit";
import { IdemError, systemClock } from "@idem/schema";
import { startPgBouncer } from "@idem/testing";
import { afterAll, describe, expect, it } from "vitest";
import { sqlExecKind } from "../../src/kinds/sql-exec/sql-exec-kind.js";
import type { SqlOptions } from "../../src/kinds/sql-exec/sql-options.js";
import { SqlOptionsSchema } from "../../src/kinds/sql-exec/sql-options.js";
import {
  createTestDb,
  type Dialect,
  sqlOptions,
  statementsOf,
  stopPostgres,
} from "./sql-fixture.js";

afterAll(stopPostgres, 60_000);

function doctor(raw: unknown, env: Record<string, string> = {}) {
  const ctx: DoctorContext<SqlOptions> = {
    options: SqlOptionsSchema.parse(raw),
    limits: DEFAULT_KIND_LIMITS,
    checking: () => {},
    clock: systemClock,
    fetch: globalThis.fetch,
    timeoutMs: 5000,
    network: false,
    env(v) {
      const value = env[v];
      if (value === undefined)
        throw new IdemError("INVALID_CONFIG", `the environment variable ${v} is not set`);
      return value;
    },
  };
  return (sqlExecKind.doctor as NonNullable<typeof sqlExecKind.doctor>)(ctx);
}

const p = (dialect: Dialect, i: number) => (dialect === "postgres" ? `$${i}` : "?");

describe.each(["postgres", "mysql"] as const)("sql.exec's doctor on %s", (dialect) => {
  it("finds nothing wrong with a reachable target whose statements prepare, and leaves the absent key table absent", async () => {
    await using db = await createTestDb(dialect);
    expect(await doctor(sqlOptions(db))).toEqual([]);
    const tables = await db.exec(
      dialect === "postgres"
        ? "SELECT to_regclass('idem_effects') AS t"
        : "SHOW TABLES LIKE 'idem_effects'",
    );
    expect(tables).toEqual(dialect === "postgres" ? [{ t: null }] : []);
  });

  it("names each statement that does not prepare, or whose placeholders differ from its params", async () => {
    await using db = await createTestDb(dialect);
    const statements = {
      ...statementsOf(dialect),
      typo: { sql: "INSERT INTO order (id) VALUES (1)" },
      no_table: {
        sql: `DELETE FROM invoices WHERE id = ${p(dialect, 1)}`,
        params: [{ name: "id", type: "integer" }],
      },
      too_few: {
        sql: `UPDATE orders SET customer = ${p(dialect, 1)} WHERE id = ${p(dialect, 2)}`,
        params: [{ name: "customer", type: "text" }],
      },
    };
    const found = await doctor(sqlOptions(db, { statements }));
    expect(found.map((f) => [f.severity, f.key])).toEqual([
      ["violation", "sql.targets.db.statements.typo.sql"],
      ["violation", "sql.targets.db.statements.no_table.sql"],
      ["violation", "sql.targets.db.statements.too_few.params"],
    ]);
    expect(found[2]?.message).toContain("has 2 parameter(s), params declares 1");
  });

  it("changes nothing at the target: a statement holding more is refused, never run", async () => {
    await using db = await createTestDb(dialect);
    const statements = {
      ...statementsOf(dialect),
      two: {
        sql: `UPDATE orders SET paid = ${dialect === "postgres" ? "true" : "1"} WHERE id = ${p(dialect, 1)}; INSERT INTO idem_drill (id, note) VALUES (7, 'doctor ran me')`,
        params: [{ name: "id", type: "integer" }],
      },
      bare: { sql: "DELETE FROM idem_drill; INSERT INTO idem_drill (id, note) VALUES (8, 'x')" },
    };
    const found = await doctor(sqlOptions(db, { statements }));
    expect(found.map((f) => [f.severity, f.key])).toEqual([
      ["violation", "sql.targets.db.statements.two.sql"],
      ["violation", "sql.targets.db.statements.bare.sql"],
    ]);
    expect(await db.count("idem_drill")).toBe(0);
    expect(await db.count("orders")).toBe(0);
  });

  it("refuses a key table that is not idem's", async () => {
    await using db = await createTestDb(dialect);
    await db.exec("CREATE TABLE idem_effects (id integer)");
    expect((await doctor(sqlOptions(db))).map((f) => [f.severity, f.key])).toEqual([
      ["violation", "sql.targets.db.keyTable"],
    ]);
  });

  it("names an unreachable target and an unset urlEnv, never a URL's password", async () => {
    const port1 =
      dialect === "postgres" ? "postgres://postgres@127.0.0.1:1/x" : "mysql://root@127.0.0.1:1/x";
    const statements = statementsOf(dialect);
    const found = await doctor({
      targets: {
        down: { dialect, url: port1, statements, timeoutMs: 2000 },
        secret: { dialect, urlEnv: "ORDERS_DB_URL", statements },
      },
    });
    expect(found.map((f) => [f.severity, f.key])).toEqual([
      ["violation", "sql.targets.down"],
      ["violation", "sql.targets.secret.urlEnv"],
    ]);
    const withSecret = await doctor(
      { targets: { secret: { dialect, urlEnv: "ORDERS_DB_URL", statements, timeoutMs: 2000 } } },
      { ORDERS_DB_URL: port1.replace("@", ":hunter2@") },
    );
    expect(withSecret.map((f) => f.key)).toEqual(["sql.targets.secret"]);
    expect(JSON.stringify(withSecret)).not.toContain("hunter2");
  });
});

describe("sql.exec's doctor on postgres through PgBouncer (transaction pooling)", () => {
  it("finds nothing wrong, names a statement holding two, and changes nothing", async () => {
    await using db = await createTestDb("postgres");
    await using bouncer = await startPgBouncer({ serverPort: Number(new URL(db.url).port) });
    const url = bouncer.through(db.url);
    const statements = statementsOf("postgres");
    expect(await doctor({ targets: { db: { dialect: "postgres", url, statements } } })).toEqual([]);
    const two = {
      ...statements,
      two: { sql: "SELECT 1; INSERT INTO idem_drill (id, note) VALUES (9, 'x')" },
    };
    const found = await doctor({ targets: { db: { dialect: "postgres", url, statements: two } } });
    expect(found.map((f) => f.key)).toEqual(["sql.targets.db.statements.two.sql"]);
    expect(await db.count("idem_drill")).toBe(0);
  });
});

describe("sql.exec's doctor on postgres, a key table it may not create", () => {
  it("is a violation with the statement that creates it", async () => {
    await using db = await createTestDb("postgres");
    await db.exec("CREATE ROLE idem_reader LOGIN");
    await db.exec("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    await db.exec("GRANT INSERT, SELECT, UPDATE ON orders, order_lines, idem_drill TO idem_reader");
    const url = db.url.replace("postgres@", "idem_reader@");
    const found = await doctor({
      targets: { db: { dialect: "postgres", url, statements: statementsOf("postgres") } },
    });
    expect(found.map((f) => [f.severity, f.key])).toEqual([
      ["violation", "sql.targets.db.keyTable"],
    ]);
    expect(found[0]?.fix).toContain("CREATE TABLE IF NOT EXISTS");
    await db.exec("DROP OWNED BY idem_reader");
    await db.exec("DROP ROLE idem_reader");
  });
});
