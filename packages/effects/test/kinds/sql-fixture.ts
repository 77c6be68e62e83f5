// The databases sql.exec's tests run against: a disposable PostgreSQL cluster of the test's own
// (packages/testing startPostgres) and a database of the test's own on the MariaDB that runs here
// (127.0.0.1:3306, root without a password), created and dropped by the test. Each holds the
// tables of a small order book; `sqlOptions` is the sql section that defines its statements.
import { randomBytes } from "node:crypto";
import { type PostgresHandle, startPostgres } from "@idem/testing";
import mysql from "mysql2/promise";
import pg from "pg";

export type Dialect = "postgres" | "mysql";

/** A database of the test's own, and an admin connection to it that is not idem's. */
export interface TestDb extends AsyncDisposable {
  readonly dialect: Dialect;
  /** Its URL (no password: trust auth, root without one). */
  readonly url: string;
  readonly name: string;
  /** One statement as the admin (placeholders of the dialect); answers the rows. */
  exec(sql: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  /** How many rows of `table` match `where` (no where: all). */
  count(table: string, where?: string, values?: unknown[]): Promise<number>;
}

/** MariaDB's URL here; IDEM_TEST_MYSQL_URL points the tests at another server. */
export const MARIADB_URL = process.env.IDEM_TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306";

const TABLES: Record<Dialect, string[]> = {
  postgres: [
    "CREATE TABLE orders (id integer PRIMARY KEY, customer text NOT NULL, total numeric(12,2) NOT NULL, paid boolean NOT NULL, meta jsonb, placed_at timestamptz NOT NULL)",
    "CREATE TABLE order_lines (order_id integer NOT NULL REFERENCES orders(id), sku varchar(16) NOT NULL, qty integer NOT NULL CHECK (qty > 0))",
    "CREATE TABLE idem_drill (id integer PRIMARY KEY, note text NOT NULL)",
  ],
  mysql: [
    "CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, total decimal(12,2) NOT NULL, paid boolean NOT NULL, meta json, placed_at datetime(3) NOT NULL) ENGINE=InnoDB",
    "CREATE TABLE order_lines (order_id int NOT NULL, sku varchar(16) NOT NULL, qty int NOT NULL CHECK (qty > 0), FOREIGN KEY (order_id) REFERENCES orders(id)) ENGINE=InnoDB",
    "CREATE TABLE idem_drill (id int PRIMARY KEY, note text NOT NULL) ENGINE=InnoDB",
  ],
};

/** The statements of the order book, in the dialect's placeholders. */
export function statementsOf(dialect: Dialect) {
  const p = (n: number) =>
    Array.from({ length: n }, (_, i) => (dialect === "postgres" ? `$${i + 1}` : "?")).join(", ");
  return {
    add_order: {
      sql: `INSERT INTO orders (id, customer, total, paid, meta, placed_at) VALUES (${p(6)})`,
      params: [
        { name: "id", type: "integer" },
        { name: "customer", type: "text" },
        { name: "total", type: "number" },
        { name: "paid", type: "boolean" },
        { name: "meta", type: "json", nullable: true },
        { name: "placed_at", type: "timestamp" },
      ],
    },
    add_line: {
      sql: `INSERT INTO order_lines (order_id, sku, qty) VALUES (${p(3)})`,
      params: [
        { name: "order_id", type: "integer" },
        { name: "sku", type: "text" },
        { name: "qty", type: "integer" },
      ],
    },
    mark_paid: {
      sql: `UPDATE orders SET paid = ${dialect === "postgres" ? "true" : "1"} WHERE id = ${p(1)}`,
      params: [{ name: "id", type: "integer" }],
    },
    drill: {
      sql: `INSERT INTO idem_drill (id, note) VALUES (${p(2)})`,
      params: [
        { name: "id", type: "integer" },
        { name: "note", type: "text" },
      ],
    },
  };
}

/** The config's `sql` section for one target `db` on `db` (more target fields in `extra`). */
export function sqlOptions(db: TestDb, extra: Record<string, unknown> = {}) {
  return {
    targets: {
      db: { dialect: db.dialect, url: db.url, statements: statementsOf(db.dialect), ...extra },
    },
  };
}

let cluster: Promise<PostgresHandle> | undefined;
/** The file's disposable PostgreSQL cluster (started once; `stopPostgres` in afterAll). */
function postgres(): Promise<PostgresHandle> {
  cluster ??= startPostgres();
  return cluster;
}
/** Stops the file's PostgreSQL cluster, if it was started. */
export async function stopPostgres(): Promise<void> {
  const c = cluster;
  cluster = undefined;
  await (await c)?.stop();
}

const newName = () => `idem_sql_${randomBytes(5).toString("hex")}`;

/** A fresh database with the order book's tables, on the dialect's server. */
export async function createTestDb(dialect: Dialect): Promise<TestDb> {
  const name = newName();
  if (dialect === "postgres") {
    const url = await (await postgres()).createDatabase(name);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const exec = async (sql: string, values: unknown[] = []) =>
      (await client.query(sql, values)).rows as Record<string, unknown>[];
    for (const t of TABLES.postgres) await exec(t);
    return {
      dialect,
      url,
      name,
      exec,
      count: async (table, where, values) =>
        Number(
          (
            await exec(
              `SELECT count(*) AS n FROM ${table}${where ? ` WHERE ${where}` : ""}`,
              values,
            )
          )[0]?.n,
        ),
      async [Symbol.asyncDispose]() {
        await client.end();
      },
    };
  }
  const admin = await mysql.createConnection({ uri: MARIADB_URL }).catch((e: Error) => {
    throw new Error(
      `MariaDB is not reachable at ${MARIADB_URL} (${e.message}); start it: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd`,
    );
  });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.query(`USE ${name}`);
  const exec = async (sql: string, values: unknown[] = []) => {
    const [rows] = await admin.query(sql, values);
    return (Array.isArray(rows) ? rows : []) as Record<string, unknown>[];
  };
  for (const t of TABLES.mysql) await exec(t);
  return {
    dialect,
    url: `${MARIADB_URL}/${name}`,
    name,
    exec,
    count: async (table, where, values) =>
      Number(
        (
          await exec(`SELECT count(*) AS n FROM ${table}${where ? ` WHERE ${where}` : ""}`, values)
        )[0]?.n,
      ),
    async [Symbol.asyncDispose]() {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    },
  };
}

/** An `add_order` statement of the spec, with its params (any of them replaced by `over`). */
export function addOrder(id: number, over: Record<string, unknown> = {}) {
  return {
    name: "add_order",
    params: {
      id,
      customer: `customer ${id}`,
      total: 12.5,
      paid: false,
      meta: { source: "agent", tags: ["a", "b"] },
      placed_at: "2026-11-25T10:00:00.000+01:00",
      ...over,
    },
  };
}
