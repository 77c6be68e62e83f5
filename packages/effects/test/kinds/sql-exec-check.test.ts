// What sql.exec refuses before an output is recorded, and what its options refuse when the config
// loads: pure, no database.
import { openKind } from "@idem/kit";
import { isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { sqlExecKind } from "../../src/kinds/sql-exec/sql-exec-kind.js";
import { SqlOptionsSchema } from "../../src/kinds/sql-exec/sql-options.js";
import { addOrder, statementsOf } from "./sql-fixture.js";

const options = {
  targets: {
    db: {
      dialect: "postgres",
      url: "postgres://app@db.internal/orders",
      statements: statementsOf("postgres"),
    },
  },
};
const k = openKind(sqlExecKind, { options, env: {} });
const spec = (statements: unknown[], extra: Record<string, unknown> = {}) => ({
  kind: "sql.exec",
  target: "db",
  statements,
  ...extra,
});

/** The fields `check` names for a spec (every issue), or [] when it passes. */
function refused(s: unknown): string[] {
  try {
    k.check(s);
    return [];
  } catch (e) {
    if (!isIdemError(e, "INVALID_INPUT")) throw e;
    const d = e.details as { field: string; issues?: { field: string }[] };
    return d.issues?.map((i) => i.field) ?? [d.field];
  }
}

describe("sql.exec's checks before record", () => {
  it("accepts statements of the target with every parameter of its type", () => {
    expect(refused(spec([addOrder(1), { name: "mark_paid", params: { id: 1 } }]))).toEqual([]);
    expect(refused(spec([addOrder(1, { meta: null })]))).toEqual([]);
  });

  it("refuses SQL, an unknown target or statement, and an empty list, naming the field", () => {
    expect(refused(spec([addOrder(1)], { sql: "DROP TABLE orders" }))).toEqual([""]);
    expect(refused({ ...spec([addOrder(1)]), target: "other" })).toEqual(["target"]);
    expect(refused({ ...spec([addOrder(1)]), target: "constructor" })).toEqual(["target"]);
    expect(refused(spec([{ name: "drop_orders" }]))).toEqual(["statements.0.name"]);
    expect(refused(spec([{ name: "toString" }]))).toEqual(["statements.0.name"]);
    expect(refused(spec([]))).toEqual(["statements"]);
    expect(refused(spec([{ name: "mark_paid", params: { id: 1 }, sql: "x" }]))).toEqual([
      "statements.0",
    ]);
  });

  it("names each parameter that is missing, unknown, null where it may not be, or of another type", () => {
    expect(
      refused(
        spec([
          { name: "add_line", params: { order_id: "1", sku: 7, qty: 1.5, colour: "red" } },
          { name: "mark_paid", params: {} },
          addOrder(1, { customer: null, paid: "yes", total: "12" }),
        ]),
      ),
    ).toEqual([
      "statements.0.params.colour",
      "statements.0.params.order_id",
      "statements.0.params.sku",
      "statements.0.params.qty",
      "statements.1.params.id",
      "statements.2.params.customer",
      "statements.2.params.total",
      "statements.2.params.paid",
    ]);
  });

  it("refuses text a database would refuse or change: NUL, half a surrogate pair, more than 1 MiB", () => {
    const line = (sku: string) =>
      spec([{ name: "add_line", params: { order_id: 1, sku, qty: 1 } }]);
    expect(refused(line("a\u0000b"))).toEqual(["statements.0.params.sku"]);
    expect(refused(line("a\ud800b"))).toEqual(["statements.0.params.sku"]);
    expect(refused(line("x".repeat(1_048_577)))).toEqual(["statements.0.params.sku"]);
    expect(refused(line("☃ 🎉"))).toEqual([]);
    expect(refused(spec([addOrder(1, { meta: { "k\u0000": 1 } })]))).toEqual([
      "statements.0.params.meta",
    ]);
  });

  it("takes integers in the safe range and finite numbers only", () => {
    const paid = (id: unknown) => refused(spec([{ name: "mark_paid", params: { id } }]));
    expect(paid(2 ** 53 - 1)).toEqual([]);
    expect(paid(-(2 ** 53 - 1))).toEqual([]);
    for (const bad of [2 ** 53, 1.5, "1", true, [1]])
      expect(paid(bad)).toEqual(["statements.0.params.id"]);
  });

  it("takes timestamps in ISO 8601 with seconds and a zone, on real calendar days", () => {
    const at = (placed_at: unknown) => refused(spec([addOrder(1, { placed_at })]));
    for (const good of [
      "2026-11-25T10:00:00Z",
      "2024-02-29T23:59:59.999+14:00",
      "2026-01-01T00:00:00-05:30",
    ])
      expect(at(good), good).toEqual([]);
    for (const bad of [
      "2026-11-25 10:00:00Z",
      "2026-11-25T10:00:00",
      "2026-11-25T10:00Z",
      "2026-02-30T10:00:00Z",
      "2025-02-29T10:00:00Z",
      "2026-11-25T24:00:00Z",
      "2026-11-25T10:00:60Z",
      "2026-11-25T10:00:00.1234Z",
      "0000-01-01T00:00:00Z",
      "2026-11-25T10:00:00+15:00",
      1_795_000_000_000,
    ])
      expect(at(bad), String(bad)).toEqual(["statements.0.params.placed_at"]);
  });
});

describe("sql.exec's options (the config's sql section)", () => {
  const target = (t: Record<string, unknown>) => ({
    targets: {
      db: {
        dialect: "postgres",
        url: "postgres://app@db/orders",
        statements: statementsOf("postgres"),
        ...t,
      },
    },
  });
  const paths = (o: unknown) => {
    const r = SqlOptionsSchema.safeParse(o);
    return r.success ? [] : r.error.issues.map((i) => i.path.join("."));
  };

  it("takes a URL without a password, or the name of the variable holding one", () => {
    expect(paths(target({}))).toEqual([]);
    expect(paths(target({ url: undefined, urlEnv: "ORDERS_DB_URL" }))).toEqual([]);
    const parsed = SqlOptionsSchema.parse(target({}));
    expect(parsed.targets.db).toMatchObject({
      keyTable: "idem_effects",
      timeoutMs: 30_000,
      poolSize: 4,
    });
  });

  it("refuses a password in the config, both or neither of url and urlEnv, and a URL of another dialect", () => {
    expect(paths(target({ url: "postgres://app:secret@db/orders" }))).toEqual(["targets.db.url"]);
    expect(paths(target({ urlEnv: "X" }))).toEqual(["targets.db.url"]);
    expect(paths(target({ url: undefined }))).toEqual(["targets.db.url"]);
    expect(paths(target({ url: "mysql://app@db/orders" }))).toEqual(["targets.db.url"]);
    expect(paths(target({ url: undefined, urlEnv: "1BAD" }))).toEqual(["targets.db.urlEnv"]);
  });

  it("refuses statements that would break idem's transaction, and DDL in MySQL, which commits implicitly", () => {
    const one = (sql: string, dialect = "postgres") =>
      paths(target({ dialect, url: `${dialect}://app@db/orders`, statements: { s: { sql } } }));
    for (const sql of [
      "COMMIT",
      "  -- c\n begin",
      "/* x */ ROLLBACK",
      "SAVEPOINT a",
      "SET search_path = x",
      "start transaction",
    ])
      expect(one(sql), sql).toEqual(["targets.db.statements.s.sql"]);
    expect(one("CREATE INDEX i ON orders (customer)")).toEqual([]);
    expect(one("CREATE INDEX i ON orders (customer)", "mysql")).toEqual([
      "targets.db.statements.s.sql",
    ]);
    expect(one("TRUNCATE orders", "mysql")).toEqual(["targets.db.statements.s.sql"]);
    expect(one("INSERT INTO t VALUES (?)", "mysql")).toEqual([]);
  });

  it("refuses MySQL's executable comments, which would hide a COMMIT or DDL from these checks", () => {
    const one = (sql: string, dialect = "mysql") =>
      paths(target({ dialect, url: `${dialect}://app@db/orders`, statements: { s: { sql } } }));
    for (const sql of [
      "/*! CREATE TABLE t (id int) */",
      "/*!50000 COMMIT */",
      "INSERT INTO t VALUES (?) /*!, (1) */",
      "/*M! DROP TABLE orders */ SELECT 1",
    ])
      expect(one(sql), sql).toEqual(["targets.db.statements.s.sql"]);
    expect(one("INSERT /*+ NO_RANGE_OPTIMIZATION(t) */ INTO t VALUES (?) -- note")).toEqual([]);
    expect(one("/* plain */ INSERT INTO t VALUES (?)")).toEqual([]);
  });

  it("refuses a malformed key table, statement or parameter name, and a parameter declared twice", () => {
    expect(paths(target({ keyTable: "idem effects" }))).toEqual(["targets.db.keyTable"]);
    expect(paths(target({ keyTable: "ops.idem_effects" }))).toEqual([]);
    expect(paths(target({ statements: { "drop-it": { sql: "SELECT 1" } } }))).toEqual([
      "targets.db.statements.drop-it",
    ]);
    expect(paths(target({ statements: {} }))).toEqual(["targets.db.statements"]);
    expect(
      paths(
        target({
          statements: {
            s: {
              sql: "SELECT $1, $2",
              params: [
                { name: "a", type: "text" },
                { name: "a", type: "text" },
              ],
            },
          },
        }),
      ),
    ).toEqual(["targets.db.statements.s.params"]);
    expect(
      paths(
        target({ statements: { s: { sql: "SELECT $1", params: [{ name: "a", type: "uuid" }] } } }),
      ),
    ).toEqual(["targets.db.statements.s.params.0.type"]);
  });
});
