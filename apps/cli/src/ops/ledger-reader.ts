import {
  type EffectState,
  type JournalStore,
  type RunState,
  SqliteJournalStore,
} from "@idem/journal";

/** The latest run of an output: its generation and state. */
export interface LatestRun {
  generation: number;
  state: RunState;
}

/** What a decision reads from one ledger row (`decideEffect` asks nothing else). */
export interface LedgerEntry {
  generation: number;
  state: EffectState;
}

/** From this many outputs on, one pass over a table beats one query per output. */
const BULK_FROM = 256;
const NONE: readonly LedgerEntry[] = [];

/**
 * Whether to read a whole table at once instead of asking the port output by output. The bulk path
 * is specific to the SQLite adapter; it reads only the columns a plan needs, as arrays (better-sqlite3
 * raw mode: half the cost of row objects). At 10,000 outputs it costs ~15 ms per table instead of
 * ~200 ms through the port. Rows of outputs that were not asked for may be kept: nobody looks them up.
 * TODO(lead): a bulk read on the JournalStore port (e.g. `ledgers(jobIds)`) would remove the
 * adapter-specific path.
 */
function bulk(journal: JournalStore, jobIds: readonly string[]): journal is SqliteJournalStore {
  return jobIds.length >= BULK_FROM && journal instanceof SqliteJournalStore;
}

/** Rows per page of a bulk read: between two pages the event loop runs (the plan's git processes). */
const PAGE_ROWS = 2000;

/**
 * A table read in pages by its integer primary key (the first column), with a turn of the event loop
 * between pages: a whole-table read at once would hold it for tens of milliseconds, while a git
 * process started early waits for this process to read its output.
 */
/** A prepared statement in raw mode, as far as `pages` uses it. */
type Statement = { all(...params: unknown[]): unknown[] };

async function* pages<R extends [number, ...unknown[]]>(statement: Statement): AsyncGenerator<R[]> {
  for (let after = 0; ; ) {
    const rows = statement.all(after, PAGE_ROWS) as R[];
    yield rows;
    if (rows.length < PAGE_ROWS) return;
    after = (rows[rows.length - 1] as R)[0];
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The latest run of each of many outputs (undefined for an output without a run). */
export async function readLatestRuns(
  journal: JournalStore,
  jobIds: readonly string[],
): Promise<(jobId: string) => LatestRun | undefined> {
  const latest = new Map<string, LatestRun>();
  if (bulk(journal, jobIds)) {
    const page = journal.database
      .prepare("SELECT id, job_id, generation, state FROM runs WHERE id > ? ORDER BY id LIMIT ?")
      .raw(true);
    for await (const rows of pages<[number, string, number, RunState]>(page)) {
      for (const [, jobId, generation, state] of rows) {
        const cur = latest.get(jobId);
        if (!cur || generation > cur.generation) latest.set(jobId, { generation, state });
      }
    }
  } else {
    for (const id of jobIds) {
      const run = await journal.latestRun(id);
      if (run) latest.set(id, { generation: run.generation, state: run.state });
    }
  }
  return (jobId) => latest.get(jobId);
}

/** The effects ledger of many outputs: every generation's rows of each effect key, any order. */
export async function readEffectLedgers(
  journal: JournalStore,
  jobIds: readonly string[],
): Promise<(key: string) => readonly LedgerEntry[]> {
  const ledgers = new Map<string, LedgerEntry[]>();
  const add = (key: string, entry: LedgerEntry) => {
    const list = ledgers.get(key);
    if (list) list.push(entry);
    else ledgers.set(key, [entry]);
  };
  if (bulk(journal, jobIds)) {
    const page = journal.database
      .prepare("SELECT id, key, generation, state FROM effects WHERE id > ? ORDER BY id LIMIT ?")
      .raw(true);
    for await (const rows of pages<[number, string, number, EffectState]>(page)) {
      for (const [, key, generation, state] of rows) add(key, { generation, state });
    }
  } else {
    for (const id of jobIds) {
      for (const r of await journal.effects(id))
        add(r.key, { generation: r.generation, state: r.state });
    }
  }
  return (key) => ledgers.get(key) ?? NONE;
}
