import type { JournalStore } from "@idem/journal";
import { EFFECT_STATES, type EffectState, type RunState } from "@idem/schema";

/** How far the interpretation of a replay's generations has come. */
export interface ReplayProgress {
  total: number;
  /** Latest runs by state (a run that moved on to a later generation counts by that one's state). */
  states: Record<RunState, number>;
  /** Runs still to interpret (pending, running, or failed and waiting for a retry). */
  remaining: number;
  /** The created generations' effects by ledger state (none yet: not decided). */
  effects: Record<EffectState, number>;
  runs: {
    jobId: string;
    generation: number;
    state: RunState | null;
    /** Its generation's effects and the state the ledger gives each (empty until decided). */
    effects: { key: string; state: EffectState }[];
  }[];
}

/**
 * The state of each output's latest run, for the generations a replay created, and which of their
 * effects were applied, found present, skipped or failed: progress while an interpreter works
 * through them. One `runs.latestOf` and one `ledger.ofJobs` read. Read-only.
 */
export async function readReplayProgress(
  journal: JournalStore,
  created: readonly { jobId: string; generation: number }[],
): Promise<ReplayProgress> {
  const ids = created.map((r) => r.jobId);
  const [latest, ledger] = await Promise.all([
    journal.runs.latestOf(ids),
    journal.ledger.ofJobs(ids),
  ]);
  const generationOf = new Map(created.map((r) => [r.jobId, r.generation]));
  /** Each job's effects in its created generation, by key. */
  const byJob = new Map<string, { key: string; state: EffectState }[]>();
  for (const [key, rows] of ledger) {
    const jobId = key.slice(0, key.lastIndexOf("/"));
    const row = rows.find((x) => x.generation === generationOf.get(jobId));
    if (!row) continue;
    const list = byJob.get(jobId) ?? [];
    list.push({ key, state: row.state });
    byJob.set(jobId, list);
  }
  const states: Record<RunState, number> = {
    pending: 0,
    running: 0,
    failed: 0,
    awaiting: 0,
    done: 0,
    dead: 0,
  };
  const effects = Object.fromEntries(EFFECT_STATES.map((s) => [s, 0])) as Record<
    EffectState,
    number
  >;
  const runs = created.map((r) => {
    const state = latest.get(r.jobId)?.state ?? null;
    if (state) states[state] += 1;
    const mine = (byJob.get(r.jobId) ?? []).sort((a, b) => a.key.localeCompare(b.key));
    for (const x of mine) effects[x.state] += 1;
    return { jobId: r.jobId, generation: r.generation, state, effects: mine };
  });
  return {
    total: created.length,
    states,
    remaining: states.pending + states.running + states.failed,
    effects,
    runs,
  };
}
