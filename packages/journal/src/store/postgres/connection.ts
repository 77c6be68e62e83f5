import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Clock, IdemError, redactUrl, systemClock } from "@idem/schema";
import type pg from "pg";
import { missingJournal } from "../../domain/missing-journal.js";
import type { WriteDurability } from "../../port/durability.js";
import type { NewEvent } from "../../port/events.js";
import { migrate, refuseForeignTables } from "./migrate.js";
import { isDatabaseError, loadPg } from "./pg-driver.js";
import { asUnavailable } from "./unavailable.js";

/** How a PostgreSQL journal is opened: pool size, injected clock and ids. */
export interface PostgresJournalOptions {
  /** Connections in the pool (default 10). */
  max?: number;
  /** The clock of what the host stamps (event times); leases and due times use the server's `now()`. */
  clock?: Clock;
  /** The source of lease tokens. */
  ids?: () => string;
  /** How often a transaction that hit a serialization failure or a deadlock is tried again (default 5). */
  retries?: number;
  /**
   * Every session read-only (`default_transaction_read_only`): any write is refused by the server
   * (SQLSTATE 25006) and no migration runs; a database without the journal's tables is NOT_FOUND.
   */
  readonly?: boolean;
  /**
   * Whether a database without the journal's tables gets them (the default, for an embedding
   * process and `idem init`). False: it is refused, INTEGRITY with `details.reason` `missing`
   * (docs/runbook.md, "A lost journal"), and nothing is created (every command but `idem init`).
   */
  create?: boolean;
}

const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), "../../../migrations-pg");

/** `tx`'s durability for writes whose loss a crash recovers from by design (see WriteDurability). */
export const SOON: WriteDurability = { soon: true };

/**
 * Inside a `soon` transaction (see `PostgresConnection.tx`): its COMMIT waits for the WAL flush
 * after all (the server's own `synchronous_commit`), for a write in it that recovery would not
 * redo if a crash of the server took it: a dead letter, a run marked dead. Changes nothing in a
 * durable transaction.
 */
export async function durableAtCommit(client: pg.PoolClient): Promise<void> {
  await client.query("SET LOCAL synchronous_commit TO DEFAULT");
}

/** The database's clock in epoch milliseconds: what every lease and due time is computed from. */
export const NOW_MS = "(extract(epoch from now()) * 1000)::bigint";

/**
 * TCP keepalive on every connection, probing after this much silence. libuv then probes every
 * second, ten times, so a connection whose server or network vanished (a partition, a host cut
 * off) fails within about 20 s as ETIMEDOUT (UNAVAILABLE) instead of waiting for an answer that
 * will never come: a healed host finds out its lease is gone, and reconnects.
 */
export const KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 10_000 } as const;

/** SQLSTATEs that mean "run the transaction again": serialization failure, deadlock detected. */
const RETRYABLE = new Set(["40001", "40P01"]);
/** SQLSTATE of a unique violation. */
export const UNIQUE_VIOLATION = "23505";

/** The SQLSTATE of a driver error, or undefined for anything else. */
export const sqlState = (e: unknown): string | undefined =>
  isDatabaseError(e) ? e.code : undefined;

/** int8 (bigserial, epoch ms) as a JS number: every value the journal stores is below 2^53. */
const typesOf = (driver: typeof pg) => ({
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === driver.types.builtins.INT8
      ? (v: string) => Number(v)
      : driver.types.getTypeParser(oid, format ?? "text")) as typeof driver.types.getTypeParser,
});

/**
 * An open that may not create (read-only, or `create: false`): the journal's tables must be there
 * already, with the migration history that made them (see `refuseForeignTables`).
 * @throws NOT_FOUND (read-only) or INTEGRITY `missing` (`create: false`) when none of them is there.
 */
async function requireJournal(pool: pg.Pool, url: string, readonly: boolean): Promise<void> {
  const client = await pool.connect();
  try {
    const [found] = (
      await client.query<{ outputs: boolean; history: boolean }>(
        "SELECT to_regclass('outputs') IS NOT NULL AS outputs, to_regclass('__drizzle_migrations') IS NOT NULL AS history",
      )
    ).rows;
    const history =
      found?.history === true &&
      (
        await client.query<{ any: boolean }>(
          "SELECT EXISTS (SELECT 1 FROM __drizzle_migrations) AS any",
        )
      ).rows[0]?.any === true;
    if (found?.outputs !== true && !history) {
      if (!readonly) throw missingJournal(redactUrl(url), "no journal tables in");
      throw new IdemError(
        "NOT_FOUND",
        `no journal in ${redactUrl(url)}: create its tables with idem init --journal (the config is kept), or check journal.url`,
      );
    }
    await refuseForeignTables(client, history);
  } finally {
    client.release();
  }
}

/**
 * The connection pool of a PostgreSQL journal and its transactions: each runs on one client
 * checked out for it, BEGIN ... COMMIT, and is answered only once COMMIT returned (the server's
 * synchronous_commit makes that durable). Serialization failures and deadlocks are tried again;
 * a server that is gone or restarting is UNAVAILABLE (see `asUnavailable`: a COMMIT whose answer
 * was lost among them, so nothing is answered as written before COMMIT returned); every other
 * error propagates as it is.
 */
export class PostgresConnection {
  readonly pool: pg.Pool;
  readonly location: string;
  readonly clock: Clock;
  readonly ids: () => string;
  private readonly retries: number;

  private constructor(url: string, pool: pg.Pool, options: PostgresJournalOptions) {
    this.pool = pool;
    this.location = redactUrl(url);
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? randomUUID;
    this.retries = options.retries ?? 5;
  }

  /** Connects and applies pending migrations under the advisory lock. */
  static async open(
    url: string,
    options: PostgresJournalOptions = {},
  ): Promise<PostgresConnection> {
    const driver = await loadPg();
    const pool = new driver.Pool({
      connectionString: url,
      max: options.max ?? 10,
      types: typesOf(driver),
      ...KEEPALIVE,
      ...(options.readonly && { options: "-c default_transaction_read_only=on" }),
    });
    // An idle client losing its server (a restart) is told here; the next query reconnects.
    pool.on("error", () => {});
    // A server that exits sends each client a FATAL message, then closes the socket: the query
    // that meets it fails (UNAVAILABLE, below), but the client can emit a second 'error' after
    // pool.query has taken its one-shot listener off and released it, and an 'error' event with
    // no listener ends the process. Every client keeps this one for its whole life.
    pool.on("connect", (client) => {
      client.on("error", () => {});
    });
    try {
      if (options.readonly || options.create === false)
        await requireJournal(pool, url, options.readonly ?? false);
      if (!options.readonly) await migrate(pool, MIGRATIONS);
    } catch (e) {
      await pool.end();
      // A server that is down, starting up or unreachable now is UNAVAILABLE, as for any later
      // call: a process starting during an outage waits for it instead of exiting.
      throw asUnavailable(e, redactUrl(url));
    }
    return new PostgresConnection(url, pool, options);
  }

  /**
   * One query outside a transaction (a read, or a single-statement write).
   * @throws UNAVAILABLE when the server is gone or restarting; other errors as they are.
   */
  async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    try {
      return (await this.pool.query<R>(text, values)).rows;
    } catch (e) {
      throw asUnavailable(e, this.location);
    }
  }

  /**
   * One write statement outside a transaction block: its own implicit transaction, answered after
   * its COMMIT returned (one round trip). A named query is prepared once per pooled connection.
   * Retried as a whole on 40001/40P01 (nothing of it committed).
   * @throws UNAVAILABLE when the server is gone or restarting, also when the answer was lost (it
   * may or may not have committed); other errors as they are.
   */
  async statement<R extends pg.QueryResultRow>(query: pg.QueryConfig): Promise<R[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.pool.query<R>(query)).rows;
      } catch (e) {
        const state = sqlState(e);
        if (state === undefined || !RETRYABLE.has(state) || attempt >= this.retries) {
          throw asUnavailable(e, this.location);
        }
      }
    }
  }

  /**
   * One transaction on one client, retried on 40001/40P01; resolves after COMMIT returned. With
   * `soon` (see WriteDurability) it commits with `synchronous_commit` off: COMMIT returns before
   * the server flushed its WAL, which the next synchronous commit (of any session: the WAL is
   * written in order) or the WAL writer within 3 x `wal_writer_delay` does. A crash of the server
   * or the host may lose it then, never a crash of this process; only for writes whose loss
   * recovery redoes (a probed settle, a completion, a claim or lease extension: a lost lease).
   * @throws UNAVAILABLE when the server is gone or restarting, also when COMMIT's answer was lost
   * (it may or may not have committed); what `fn` throws otherwise, as it is.
   */
  async tx<T>(fn: (client: pg.PoolClient) => Promise<T>, durability?: WriteDurability): Promise<T> {
    // One round trip either way: both statements in one simple query.
    const begin = durability?.soon ? "BEGIN; SET LOCAL synchronous_commit = off" : "BEGIN";
    for (let attempt = 0; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (e) {
        throw asUnavailable(e, this.location);
      }
      // A client whose ROLLBACK failed has lost its connection: destroyed, not pooled again.
      let broken: Error | undefined;
      // The pool stops listening to a client it lends: a connection lost between two queries
      // would be an uncaught 'error' event (a crashed process) without this listener.
      const lost = (e: Error) => {
        broken ??= e;
      };
      client.on("error", lost);
      try {
        await client.query(begin);
        try {
          const result = await fn(client);
          await client.query("COMMIT");
          return result;
        } catch (e) {
          await client.query("ROLLBACK").catch((rollbackError: Error) => {
            broken = rollbackError;
          });
          throw e;
        }
      } catch (e) {
        const state = sqlState(e);
        if (state === undefined || !RETRYABLE.has(state) || attempt >= this.retries) {
          throw asUnavailable(e, this.location);
        }
      } finally {
        // A broken client keeps the listener: it is destroyed and may still report its socket.
        if (broken === undefined) client.removeListener("error", lost);
        client.release(broken);
      }
    }
  }

  /** Appends an event inside the caller's transaction. */
  async event(client: pg.PoolClient, event: NewEvent): Promise<void> {
    const { jobId, type, data, actor } = event;
    await client.query(
      "INSERT INTO events (at, job_id, type, data, actor) VALUES ($1, $2, $3, $4, $5)",
      [this.clock.now(), jobId, type, data === undefined ? null : JSON.stringify(data), actor],
    );
  }

  /** Ends the pool; idempotent. */
  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}
