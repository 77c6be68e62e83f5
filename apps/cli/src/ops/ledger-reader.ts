import {
  type EffectRecord,
  type EffectState,
  type JournalStore,
  type RunState,
  SqliteJournalStore,
} from "@idem/journal";

/** The latest run and the effects ledger (every generation) of each selected output. */
export interface Ledgers {
  latest(jobId: string): { generation: number; state: RunState } | undefined;
  ledger(jobId: string): EffectRecord[];
}

/** From this many outputs on, one pass over the tables beats one query per output. */
const BULK_FROM = 256;

/**
 * Reads the latest run and the ledger of many outputs. Through the port that is two queries per
 * output; for a large selection on the SQLite adapter it reads both tables once (a replay plan of
 * 10,000 outputs: ~30 ms instead of ~400 ms).
 * TODO(lead): a bulk read on the JournalStore port (e.g. `ledgers(jobIds)`) would remove the
 * adapter-specific path below.
 */
export async function readLedgers(
  journal: JournalStore,
  jobIds: readonly string[],
): Promise<Ledgers> {
  if (jobIds.length < BULK_FROM || !(journal instanceof SqliteJournalStore)) {
    const latest = new Map<string, { generation: number; state: RunState }>();
    const ledgers = new Map<string, EffectRecord[]>();
    for (const id of jobIds) {
      const run = await journal.latestRun(id);
      if (run) latest.set(id, { generation: run.generation, state: run.state });
      ledgers.set(id, await journal.effects(id));
    }
    return { latest: (id) => latest.get(id), ledger: (id) => ledgers.get(id) ?? [] };
  }
  const wanted = new Set(jobIds);
  const db = journal.database;
  // Rows as arrays (better-sqlite3 raw mode): half the cost of row objects at this size.
  const latest = new Map<string, { generation: number; state: RunState }>();
  const runs = db.prepare("SELECT job_id, generation, state FROM runs").raw(true).all() as [
    string,
    number,
    RunState,
  ][];
  for (const [jobId, generation, state] of runs) {
    if (!wanted.has(jobId)) continue;
    const cur = latest.get(jobId);
    if (!cur || generation > cur.generation) latest.set(jobId, { generation, state });
  }
  const ledgers = new Map<string, EffectRecord[]>();
  const rows = db
    .prepare(
      "SELECT key, generation, job_id, idx, kind, spec_hash, state, detail, attempts, updated_at FROM effects",
    )
    .raw(true)
    .all() as [
    string,
    number,
    string,
    number,
    string,
    string,
    EffectState,
    string | null,
    number,
    number,
  ][];
  for (const [
    key,
    generation,
    jobId,
    idx,
    kind,
    specHash,
    state,
    detail,
    attempts,
    updatedAt,
  ] of rows) {
    if (!wanted.has(jobId)) continue;
    let list = ledgers.get(jobId);
    if (!list) {
      list = [];
      ledgers.set(jobId, list);
    }
    list.push({
      key,
      generation,
      jobId,
      idx,
      kind,
      specHash,
      state,
      detail: detail === null ? null : (JSON.parse(detail) as Record<string, unknown>),
      attempts,
      updatedAt,
    });
  }
  return { latest: (id) => latest.get(id), ledger: (id) => ledgers.get(id) ?? [] };
}
