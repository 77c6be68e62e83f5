import { ignoreServerShutdown } from "@idem/testing";
import Database from "better-sqlite3";
import pg from "pg";
import type { JournalStore } from "../../src/index.js";
import { openSqliteJournal } from "../../src/index.js";
import { PostgresJournalStore } from "../../src/store/postgres/postgres-journal-store.js";
import type { ContractStore, StoreFactory } from "./stores.js";

/** What the jobs, dead-letters, maintenance and status suites use of a store. */
export type QueueStore = Pick<
  JournalStore,
  "outputs" | "jobs" | "deadLetters" | "maintenance" | "events" | "status"
> & { readonly location: string; close(): Promise<void> };

/** The store a factory opened, checked to fill the namespaces these suites use. */
export function queue(s: ContractStore): QueueStore {
  for (const name of ["jobs", "deadLetters", "maintenance", "status", "location"] as const) {
    if (!(name in s)) throw new Error(`the contract store has no ${name}`);
  }
  return s as unknown as QueueStore;
}

/** Another store on the same journal: another pool, or another connection to the SQLite file. */
export async function another(factory: StoreFactory, s: QueueStore): Promise<QueueStore> {
  return factory.name === "sqlite"
    ? openSqliteJournal(s.location)
    : (PostgresJournalStore.open(s.location) as unknown as Promise<QueueStore>);
}

/**
 * Runs one raw statement on the journal behind the port, as an operator's SQL client would: to
 * stand in for the interpreter finishing a run, or to try what the triggers must refuse.
 */
export async function rawSql(
  factory: StoreFactory,
  s: QueueStore,
  sql: { sqlite: string; postgres: string },
): Promise<void> {
  if (factory.name === "sqlite") {
    const db = new Database(s.location);
    try {
      db.exec(sql.sqlite);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: s.location });
  client.on("error", ignoreServerShutdown);
  await client.connect();
  try {
    await client.query(sql.postgres);
  } finally {
    await client.end();
  }
}

/** Polls `probe` until it answers something, waiting generously (no outcome depends on speed). */
export async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
