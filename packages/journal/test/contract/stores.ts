import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "@idem/schema";
import { type PostgresHandle, startPostgres } from "@idem/testing";
import type { JournalStore } from "../../src/index.js";
import { openSqliteJournal } from "../../src/index.js";
import { PostgresJournalStore } from "../../src/store/postgres/postgres-journal-store.js";

/**
 * What the contract suite runs against: the part of the port both stores fill so far (the
 * PostgreSQL adapter grows concern by concern; each suite names the namespaces it needs).
 */
export type ContractStore = {
  outputs: Pick<JournalStore["outputs"], "record" | "get" | "has" | "rejections">;
  events: JournalStore["events"];
  close(): Promise<void>;
};

/** What a store is opened with: the clock of what the host stamps, and the source of lease tokens. */
export type StoreOptions = { clock?: Clock; ids?: () => string };

/** A store factory: a fresh, empty journal per call; `teardown` ends what the factory started. */
export interface StoreFactory {
  name: "sqlite" | "postgres";
  open(options?: StoreOptions): Promise<ContractStore>;
  teardown(): Promise<void>;
}

/** SQLite: a journal file in a fresh temp dir per store. */
export function sqliteFactory(): StoreFactory {
  const dirs: string[] = [];
  return {
    name: "sqlite",
    async open(options = {}) {
      const dir = mkdtempSync(join(tmpdir(), "idem-contract-"));
      dirs.push(dir);
      return openSqliteJournal(join(dir, "journal.db"), options);
    },
    async teardown() {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** PostgreSQL: one disposable server per suite, a fresh database per store. */
export function postgresFactory(): StoreFactory {
  let server: PostgresHandle | undefined;
  let n = 0;
  return {
    name: "postgres",
    async open(options = {}) {
      server ??= await startPostgres();
      return PostgresJournalStore.open(await server.createDatabase(`contract_${++n}`), options);
    },
    async teardown() {
      await server?.stop();
    },
  };
}

/** Both stores, for `describe.each`. */
export const STORES = [sqliteFactory, postgresFactory];
