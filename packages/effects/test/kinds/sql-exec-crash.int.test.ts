// The interpreter, a real `idem interpreter --once` process, killed by IDEM_FAULT inside sql.exec's
// transaction (after the statements, before COMMIT) and right after COMMIT; a fresh one finishes.
// The rows exist once in both cases, and no effect is ever `uncertain`: the key row commits with
// the statements, so the next probe always knows. PostgreSQL both directly and through PgBouncer.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPgBouncer } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQL_FAULT_POINTS } from "../../src/kinds/sql-exec/sql-transaction.js";
import { buildCli, idem, type Shown } from "./idem-cli.js";
import {
  addOrder,
  createTestDb,
  type Dialect,
  sqlOptions,
  stopPostgres,
  type TestDb,
} from "./sql-fixture.js";

// The CLI the test runs is the built one.
beforeAll(buildCli, 300_000);
afterAll(stopPostgres, 60_000);

/**
 * One output of two sql.exec effects, the interpreter killed at `point`, then a fresh one: checks
 * the rows at `db` (reached at `via` when given: a pooler in front of it).
 */
async function killAndFinish(db: TestDb, point: string, via?: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "idem-sql-crash-"));
  try {
    const config = {
      journal: { path: ".idem/journal.db" },
      interpreter: { leaseMs: 1000, backoffMs: [50, 100], pollMs: 20 },
      sql: via ? { targets: { db: { ...sqlOptions(db).targets.db, url: via } } } : sqlOptions(db),
    };
    writeFileSync(join(dir, "idem.config.json"), JSON.stringify(config, null, 2));
    const output = {
      jobId: "order-1",
      agent: "writer",
      effects: [
        {
          kind: "sql.exec",
          target: "db",
          statements: [
            addOrder(1),
            { name: "add_line", params: { order_id: 1, sku: "A-1", qty: 2 } },
            { name: "add_line", params: { order_id: 1, sku: "B-2", qty: 1 } },
          ],
        },
        {
          kind: "sql.exec",
          target: "db",
          statements: [{ name: "mark_paid", params: { id: 1 } }],
        },
      ],
    };
    writeFileSync(join(dir, "output.json"), JSON.stringify(output));
    expect((await idem(dir, ["init", "--journal"])).code).toBe(0);
    const submitted = await idem(dir, ["submit", "output.json", "--json"]);
    expect(submitted.code, submitted.stderr).toBe(0);

    const killed = await idem(dir, ["interpreter", "--once"], { IDEM_FAULT: point });
    expect(killed.signal, killed.stderr).toBe("SIGKILL");
    const committed = point === SQL_FAULT_POINTS.AFTER_COMMIT ? 1 : 0;
    expect(await db.count("orders")).toBe(committed);
    expect(await db.count("order_lines")).toBe(2 * committed);
    expect(await db.count("idem_effects")).toBe(committed);

    const fresh = await idem(dir, ["interpreter", "--once", "--json"]);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(await db.count("orders")).toBe(1);
    expect(await db.count("order_lines")).toBe(2);
    expect(await db.count("orders", "paid")).toBe(1);
    expect(await db.count("idem_effects")).toBe(2);

    const shown = JSON.parse((await idem(dir, ["show", "order-1", "--json"])).stdout) as Shown;
    expect(shown.runs.at(-1)?.state).toBe("done");
    expect(shown.effects.map((e) => [e.key, e.state])).toEqual([
      ["order-1/0", committed ? "present" : "applied"],
      ["order-1/1", "applied"],
    ]);
    expect(shown.events.filter((e) => /uncertain/.test(e.type))).toEqual([]);
    expect(`${killed.stderr}${fresh.stderr}`).not.toMatch(/uncertain/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.each(["postgres", "mysql"] as const)(
  "sql.exec on %s under SIGKILL",
  (dialect: Dialect) => {
    it.each([SQL_FAULT_POINTS.BEFORE_COMMIT, SQL_FAULT_POINTS.AFTER_COMMIT])(
      "leaves every row once after a kill at %s, and never an uncertain effect",
      async (point) => {
        await using db = await createTestDb(dialect);
        await killAndFinish(db, point);
      },
      180_000,
    );
  },
);

// PgBouncer in transaction pooling (Debian's pgbouncer): a server connection per transaction, no
// session state kept, startup parameters it does not track refused.
describe("sql.exec on postgres through PgBouncer (transaction pooling) under SIGKILL", () => {
  it.each([SQL_FAULT_POINTS.BEFORE_COMMIT, SQL_FAULT_POINTS.AFTER_COMMIT])(
    "leaves every row once after a kill at %s, and never an uncertain effect",
    async (point) => {
      await using db = await createTestDb("postgres");
      await using bouncer = await startPgBouncer({ serverPort: Number(new URL(db.url).port) });
      await killAndFinish(db, point, bouncer.through(db.url));
      expect(await bouncer.log()).not.toMatch(/unsupported startup parameter/);
    },
    180_000,
  );
});
