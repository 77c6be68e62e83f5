import { IdemError } from "@idem/kit";
import { openMysql } from "./mysql-driver.js";
import { openPostgres } from "./postgres-driver.js";
import { type KeyTableSql, keyTableSql, type SqlDriver } from "./sql-driver.js";
import { sqlFailure } from "./sql-failure.js";
import { type SqlOptions, type SqlTarget, sqlTarget, urlProblem } from "./sql-options.js";

/**
 * The connection URL of a target: `url`, or the value of the environment variable `urlEnv` names.
 * @throws IdemError INVALID_CONFIG naming the key (never the URL) when it is unset or malformed.
 */
export function targetUrl(alias: string, t: SqlTarget, env: (variable: string) => string): string {
  if (t.url !== undefined) return t.url;
  const key = `sql.targets.${alias}.urlEnv`;
  const url = env(t.urlEnv as string);
  const why = urlProblem(url, t.dialect);
  // A URL from the environment may carry its password: only a malformed one is refused.
  if (why && !why.startsWith("may not carry a password"))
    throw new IdemError("INVALID_CONFIG", `${key}: the URL in ${t.urlEnv} ${why}`, {
      details: { key },
    });
  return url;
}

/** Opens a pool to one target with its dialect's adapter (the driver imported then). */
export function openDriver(
  t: SqlTarget,
  url: string,
  bounds: { timeoutMs: number } = t,
): Promise<SqlDriver> {
  const o = { url, poolSize: t.poolSize, timeoutMs: bounds.timeoutMs };
  return t.dialect === "postgres" ? openPostgres(o) : openMysql(o);
}

/** One target as sql.exec uses it: its alias, options, pool and key table's SQL. */
export interface OpenTarget {
  alias: string;
  target: SqlTarget;
  driver: SqlDriver;
  keys: KeyTableSql;
  /** Creates the key table when it is missing (`CREATE TABLE IF NOT EXISTS`), once per process. */
  keyTableReady(): Promise<void>;
}

/**
 * sql.exec's resource: a pool per target, opened when the target is first used (so a process
 * that never applies a sql.exec effect never loads a driver), and closed with it.
 */
export class SqlTargets {
  private readonly opened = new Map<string, Promise<OpenTarget>>();

  /**
   * @param env reads the variable `urlEnv` names (OpenContext.env).
   * @param fault the host's fault hook, called at SQL_FAULT_POINTS (OpenContext.fault).
   */
  constructor(
    private readonly options: SqlOptions,
    private readonly env: (variable: string) => string,
    readonly fault: (point: string) => void = () => {},
  ) {}

  /** The target `alias`, opened. @throws IdemError INVALID_INPUT / INVALID_CONFIG. */
  target(alias: string): Promise<OpenTarget> {
    let p = this.opened.get(alias);
    if (!p) {
      const t = sqlTarget(this.options, alias);
      p = (async () => {
        const driver = await openDriver(t, targetUrl(alias, t, this.env));
        return withKeyTable(alias, t, driver);
      })();
      // A target that failed to open is opened again next time (a variable set meanwhile).
      p.catch(() => this.opened.delete(alias));
      this.opened.set(alias, p);
    }
    return p;
  }

  async close(): Promise<void> {
    const all = [...this.opened.values()];
    this.opened.clear();
    await Promise.all(
      all.map(async (p) => {
        const t = await p.catch(() => undefined);
        await t?.driver.end().catch(() => {});
      }),
    );
  }
}

/** A target with its key table's SQL and the once-per-process creation of it. */
export function withKeyTable(alias: string, target: SqlTarget, driver: SqlDriver): OpenTarget {
  const keys = keyTableSql(target.dialect, target.keyTable);
  let ready: Promise<void> | undefined;
  return {
    alias,
    target,
    driver,
    keys,
    keyTableReady() {
      ready ??= (async () => {
        try {
          await driver.query(keys.create);
        } catch (e) {
          // Two processes creating it at once: PostgreSQL may refuse the second; it is there.
          const there = await driver.query(keys.shape).then(
            () => true,
            () => false,
          );
          if (!there) throw sqlFailure(driver, e, { alias, what: `create ${target.keyTable}` });
        }
      })();
      ready.catch(() => {
        ready = undefined;
      });
      return ready;
    },
  };
}
