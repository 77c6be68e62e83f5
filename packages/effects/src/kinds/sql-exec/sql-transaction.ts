import { absent, type ProbeResult, present } from "@idem/kit";
import { readTime, storedTime } from "./sql-driver.js";
import { sqlFailure } from "./sql-failure.js";
import type { BoundStatement } from "./sql-params.js";
import type { OpenTarget } from "./sql-targets.js";

/**
 * sql.exec's own fault points (docs/reliability.md, "Fault points"): `IDEM_FAULT` kills the
 * process there, inside the transaction after its statements and before COMMIT, and after COMMIT
 * before apply returns.
 */
export const SQL_FAULT_POINTS = {
  BEFORE_COMMIT: "sql.before-commit",
  AFTER_COMMIT: "sql.after-commit",
} as const;

/**
 * Whether the key row of `key` is committed at the target: present with when it was applied,
 * else absent (a target without the key table yet has none). Reads only (on a pooled connection,
 * or with `query` on one the caller holds); never changes the target; never answers an unknown
 * outcome.
 * @throws IdemError UNAVAILABLE when the target cannot answer now; INVALID_CONFIG as sqlFailure.
 */
export async function probeKey(
  t: OpenTarget,
  key: string,
  query: OpenTarget["driver"]["query"] = (sql, values) => t.driver.query(sql, values),
): Promise<ProbeResult> {
  try {
    const r = await query(t.keys.select, [key]);
    const row = r.rows[0];
    if (!row) return absent({ target: t.alias });
    return present({ target: t.alias, appliedAt: readTime(row.applied_at) ?? null });
  } catch (e) {
    if (t.driver.classify(e) === "missing-table") return absent({ target: t.alias });
    throw sqlFailure(t.driver, e, { alias: t.alias, what: `read ${t.target.keyTable}` });
  }
}

/** Every key in the target's key table, each at `sql:<alias>` (none without the table). */
export async function scanKeys(t: OpenTarget): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  try {
    const r = await t.driver.query(t.keys.selectAll);
    for (const row of r.rows) {
      const key = String(row.effect_key);
      out.set(key, [...(out.get(key) ?? []), `sql:${t.alias}`]);
    }
  } catch (e) {
    if (t.driver.classify(e) !== "missing-table")
      throw sqlFailure(t.driver, e, { alias: t.alias, what: `read ${t.target.keyTable}` });
  }
  return out;
}

/**
 * Runs the statements and inserts the key row in ONE transaction: BEGIN; the key row first (so a
 * concurrent apply of the same key waits on it before running any statement, then fails on the
 * unique key); each statement with its values bound; COMMIT. A crash before COMMIT leaves
 * nothing (the server rolls back when the connection closes); after it, the probe finds the key.
 * A unique violation on the key row means another apply committed it: rolled back, and answered
 * as present. Any other failure rolls back (a connection whose state is unknown is dropped) and
 * throws as sqlFailure maps it.
 */
export async function applyStatements(
  t: OpenTarget,
  key: string,
  statements: readonly BoundStatement[],
  now: number,
  fault: (point: string) => void,
): Promise<Record<string, unknown>> {
  const where = { alias: t.alias, what: "the transaction" };
  await t.keyTableReady();
  const session = await t.driver.session().catch((e: unknown) => {
    throw sqlFailure(t.driver, e, { ...where, what: "connect" });
  });
  let broken = false;
  const rollback = async () => {
    await session.query("ROLLBACK").catch(() => {
      broken = true;
    });
  };
  try {
    await session.begin();
    const appliedAt = storedTime(t.driver.dialect, now);
    try {
      await session.query(t.keys.insert, [key, appliedAt]);
    } catch (e) {
      if (t.driver.classify(e) !== "unique") throw e;
      await rollback();
      // On this connection: with a pool of one, another checkout would wait for this one.
      const found = await probeKey(t, key, (sql, values) => session.query(sql, values));
      if (found.status === "present") return found.detail;
      throw e;
    }
    const rows: number[] = [];
    for (const [index, s] of statements.entries()) {
      try {
        rows.push((await session.query(s.sql, s.values)).rowCount);
      } catch (e) {
        throw sqlFailure(t.driver, e, {
          ...where,
          what: "run",
          statement: { index, name: s.name },
        });
      }
    }
    fault(SQL_FAULT_POINTS.BEFORE_COMMIT);
    await session.query("COMMIT");
    fault(SQL_FAULT_POINTS.AFTER_COMMIT);
    return { target: t.alias, appliedAt: new Date(now).toISOString(), rows };
  } catch (e) {
    // A failed COMMIT or a lost connection: the server rolls back what did not commit.
    await rollback();
    throw sqlFailure(t.driver, e, where);
  } finally {
    session.release(broken);
  }
}
