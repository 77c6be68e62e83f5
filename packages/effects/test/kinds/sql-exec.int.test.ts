// sql.exec against the real databases that run here: a disposable PostgreSQL cluster and a
// database of the test's own on MariaDB. Rows exist once, a transaction is all or nothing, and the
// key row decides every probe.
import { type OpenedKind, openKind } from "@idem/kit";
import { afterAll, describe, expect, it } from "vitest";
import { sqlExecKind } from "../../src/kinds/sql-exec/sql-exec-kind.js";
import { expectIdemError, fieldOf, interpret, rejection } from "./kind-calls.js";
import {
  addOrder,
  createTestDb,
  type Dialect,
  sqlOptions,
  stopPostgres,
  type TestDb,
} from "./sql-fixture.js";

afterAll(stopPostgres, 60_000);

const spec = (statements: unknown[]) => ({ kind: "sql.exec", target: "db", statements });

async function setUp(dialect: Dialect, extra: Record<string, unknown> = {}, env = {}) {
  const db = await createTestDb(dialect);
  const k = openKind(sqlExecKind, { options: sqlOptions(db, extra), env });
  return { db, k };
}

describe.each(["postgres", "mysql"] as const)("sql.exec on %s", (dialect) => {
  let opened: { db: TestDb; k: OpenedKind }[] = [];
  const open = async (extra: Record<string, unknown> = {}, env = {}) => {
    const o = await setUp(dialect, extra, env);
    opened.push(o);
    return o;
  };
  afterAll(async () => {
    for (const o of opened) {
      await o.k.close();
      await o.db[Symbol.asyncDispose]();
    }
    opened = [];
  });

  it("is absent before, applies the rows and the key once, then is present; a second apply changes nothing", async () => {
    const { db, k } = await open();
    const s = k.check(
      spec([addOrder(1), { name: "add_line", params: { order_id: 1, sku: "A-1", qty: 2 } }]),
    );
    // The probe never creates the key table: a target without it has no key.
    expect(await k.probe(s, "job-1/0")).toEqual({ status: "absent", detail: { target: "db" } });
    expect(
      await db.exec(
        dialect === "postgres"
          ? "SELECT to_regclass('idem_effects') AS t"
          : "SHOW TABLES LIKE 'idem_effects'",
      ),
    ).toEqual(dialect === "postgres" ? [{ t: null }] : []);
    const first = await interpret(k, s, "job-1/0", Date.now());
    expect(first).toMatchObject({ outcome: "applied", detail: { target: "db", rows: [1, 1] } });
    const probed = await k.probe(s, "job-1/0");
    expect(probed).toEqual({
      status: "present",
      detail: { target: "db", appliedAt: first.detail.appliedAt },
    });
    expect(await interpret(k, s, "job-1/0", Date.now())).toMatchObject({ outcome: "present" });
    const detail = { target: "db", appliedAt: first.detail.appliedAt };
    // Apply without a probe probes itself; after a stale absent one, the key row's unique key
    // stops the repeat inside the transaction, which rolls back.
    expect(await k.apply(s, "job-1/0")).toEqual(detail);
    expect(await k.apply(s, "job-1/0", { probed: { status: "absent", detail: {} } })).toEqual(
      detail,
    );
    expect(await db.count("orders")).toBe(1);
    expect(await db.count("order_lines")).toBe(1);
    expect(await db.count("idem_effects")).toBe(1);
    const keys = await k.scan(s);
    expect([...(keys ?? new Map())]).toEqual([["job-1/0", ["sql:db"]]]);
  });

  it("binds every parameter type: text, integer, number, boolean, json, a timestamp in UTC, and null", async () => {
    const { db, k } = await open();
    const text = "naïve \"quoted\" 'text'; DROP TABLE orders; -- ☃ 🎉";
    await interpret(
      k,
      k.check(
        spec([
          addOrder(7, {
            customer: text,
            total: 1234.56,
            paid: true,
            placed_at: "2026-11-25T10:00:00.250+01:30",
          }),
        ]),
      ),
      "job-7/0",
      Date.now(),
    );
    await interpret(k, k.check(spec([addOrder(8, { meta: null })])), "job-8/0", Date.now());
    const rows = await db.exec(
      dialect === "postgres"
        ? "SELECT id, customer, total::text AS total, paid, meta, to_char(placed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') AS placed FROM orders ORDER BY id"
        : "SELECT id, customer, CAST(total AS CHAR) AS total, paid, meta, DATE_FORMAT(placed_at, '%Y-%m-%d %H:%i:%s.%f') AS placed FROM orders ORDER BY id",
    );
    const meta = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v);
    expect(rows.map((r) => ({ ...r, meta: meta(r.meta), paid: Boolean(r.paid) }))).toEqual([
      {
        id: 7,
        customer: text,
        total: "1234.56",
        paid: true,
        meta: { source: "agent", tags: ["a", "b"] },
        placed: dialect === "postgres" ? "2026-11-25 08:30:00.250" : "2026-11-25 08:30:00.250000",
      },
      {
        id: 8,
        customer: "customer 8",
        total: "12.50",
        paid: false,
        meta: null,
        placed: dialect === "postgres" ? "2026-11-25 09:00:00.000" : "2026-11-25 09:00:00.000000",
      },
    ]);
  });

  it("rolls back every statement and the key when one of them is refused: a constraint is a conflict", async () => {
    const { db, k } = await open();
    const s = k.check(
      spec([addOrder(2), { name: "add_line", params: { order_id: 999, sku: "A-1", qty: 1 } }]),
    );
    expectIdemError(await rejection(interpret(k, s, "job-2/0", Date.now())), "TARGET_CONFLICT");
    expect(await db.count("orders")).toBe(0);
    expect((await k.probe(s, "job-2/0")).status).toBe("absent");
  });

  it("refuses a value the column cannot take as INVALID_INPUT naming the statement's params, leaving nothing", async () => {
    const { db, k } = await open();
    const s = k.check(
      spec([
        addOrder(3),
        { name: "add_line", params: { order_id: 3, sku: "much-too-long-for-sixteen", qty: 1 } },
      ]),
    );
    const e = await rejection(interpret(k, s, "job-3/0", Date.now()));
    expectIdemError(e, "INVALID_INPUT");
    expect(fieldOf(e)).toBe("statements.1.params");
    expect(await db.count("orders")).toBe(0);
  });

  it("makes a concurrent apply of the same key wait on the key row and answer present: the rows exist once", async () => {
    const { db, k } = await open();
    const other = openKind(sqlExecKind, { options: sqlOptions(db), env: {} });
    try {
      const s = k.check(spec([addOrder(4), { name: "mark_paid", params: { id: 4 } }]));
      await k.probe(s, "warm/0");
      const absent = await k.probe(s, "job-4/0");
      const both = await Promise.all([
        k.apply(s, "job-4/0", { probed: absent }),
        other.apply(s, "job-4/0", { probed: absent }),
      ]);
      expect(both.map((d) => d.target)).toEqual(["db", "db"]);
      expect(both.filter((d) => Array.isArray(d.rows))).toHaveLength(1);
      expect(await db.count("orders")).toBe(1);
      expect(await db.count("idem_effects")).toBe(1);
    } finally {
      await other.close();
    }
  });

  it("reads the URL from the variable urlEnv names, and fails INVALID_CONFIG naming the variable when it is unset", async () => {
    const db = await createTestDb(dialect);
    try {
      const options = {
        targets: { db: { ...sqlOptions(db).targets.db, url: undefined, urlEnv: "ORDERS_DB_URL" } },
      };
      const k = openKind(sqlExecKind, { options, env: { ORDERS_DB_URL: db.url } });
      const s = k.check(spec([addOrder(5)]));
      expect((await interpret(k, s, "job-5/0", Date.now())).outcome).toBe("applied");
      await k.close();
      const unset = openKind(sqlExecKind, { options, env: {} });
      const e = await rejection(unset.probe(s, "job-5/0"));
      expectIdemError(e, "INVALID_CONFIG");
      expect((e as { details?: { variable?: string } }).details?.variable).toBe("ORDERS_DB_URL");
      await unset.close();
    } finally {
      await db[Symbol.asyncDispose]();
    }
  });

  it("answers a repeat after a stale probe on its own connection, with a pool of one", async () => {
    const { db, k } = await open({ poolSize: 1, timeoutMs: 5000 });
    const s = k.check(spec([addOrder(9)]));
    const absent = await k.probe(s, "job-9/0");
    await k.apply(s, "job-9/0", { probed: absent });
    expect(await k.apply(s, "job-9/0", { probed: absent })).toMatchObject({ target: "db" });
    expect(await db.count("orders")).toBe(1);
  });

  it("keeps its keys in the keyTable the target names", async () => {
    const { db, k } = await open({ keyTable: "agent_effects" });
    await interpret(k, k.check(spec([addOrder(6)])), "job-6/0", Date.now());
    expect(await db.count("agent_effects")).toBe(1);
  });

  it("runs one statement per statement: a configured `...; COMMIT; ...` fails and commits nothing", async () => {
    const { db, k } = await open({
      statements: {
        sneaky: {
          sql: "INSERT INTO idem_drill (id, note) VALUES (1, 'a'); COMMIT; INSERT INTO idem_drill (id, note) VALUES (2, 'b')",
        },
      },
    });
    const s = k.check(spec([{ name: "sneaky", params: {} }]));
    await rejection(interpret(k, s, "job-9/0", Date.now()));
    expect(await db.count("idem_drill")).toBe(0);
    expect((await k.probe(s, "job-9/0")).status).toBe("absent");
  });

  it("answers UNAVAILABLE, not an unknown outcome, when the server cannot be reached", async () => {
    const db = {
      dialect,
      url:
        dialect === "postgres" ? "postgres://postgres@127.0.0.1:1/x" : "mysql://root@127.0.0.1:1/x",
    };
    const k = openKind(sqlExecKind, {
      options: sqlOptions(db as TestDb, { timeoutMs: 2000 }),
      env: {},
    });
    const s = k.check(spec([addOrder(1)]));
    expectIdemError(await rejection(k.probe(s, "job-1/0")), "UNAVAILABLE");
    expectIdemError(
      await rejection(k.apply(s, "job-1/0", { probed: { status: "absent", detail: {} } })),
      "UNAVAILABLE",
    );
    await k.close();
  });
});
