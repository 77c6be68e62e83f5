import type { Clock } from "@idem/schema";
import type { JournalStore } from "../../src/index.js";
import { openSqliteJournal } from "../../src/index.js";
import { PostgresJournalStore } from "../../src/store/postgres/postgres-journal-store.js";
import type { ContractStore, StoreFactory } from "./stores.js";

/** What the runs, ledger and outputs-list suites need: outputs, runs, ledger, events. */
export type FullStore = Pick<JournalStore, "outputs" | "runs" | "ledger" | "events"> & {
  readonly location: string;
  close(): Promise<void>;
};

/** The store a factory opened, checked to fill the namespaces these suites use. */
export function full(s: ContractStore): FullStore {
  for (const name of ["runs", "ledger", "location"] as const) {
    if (!(name in s)) throw new Error(`the contract store has no ${name}`);
  }
  return s as unknown as FullStore;
}

/**
 * Another store on the same journal (another connection pool, or another SQLite connection to the
 * file), as another host or process would open it; optionally with its own clock and ids.
 */
export async function another(
  factory: StoreFactory,
  s: FullStore,
  options: { clock?: Clock; ids?: () => string } = {},
): Promise<FullStore> {
  return factory.name === "sqlite"
    ? openSqliteJournal(s.location, options)
    : PostgresJournalStore.open(s.location, options);
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
