import type { JournalStore } from "@idem/journal";
import type { RunState } from "@idem/schema";

/** How far the interpretation of a replay's generations has come. */
export interface ReplayProgress {
  total: number;
  /** Latest runs by state (a run that moved on to a later generation counts by that one's state). */
  states: Record<RunState, number>;
  /** Runs still to interpret (pending, running, or failed and waiting for a retry). */
  remaining: number;
  runs: { jobId: string; generation: number; state: RunState | null }[];
}

/**
 * The state of each output's latest run, for the generations a replay created: progress while an
 * interpreter works through them. One `runs.latestOf` read. Read-only.
 */
export async function readReplayProgress(
  journal: JournalStore,
  created: readonly { jobId: string; generation: number }[],
): Promise<ReplayProgress> {
  const latest = await journal.runs.latestOf(created.map((r) => r.jobId));
  const states: Record<RunState, number> = { pending: 0, running: 0, failed: 0, done: 0, dead: 0 };
  const runs = created.map((r) => {
    const state = latest.get(r.jobId)?.state ?? null;
    if (state) states[state] += 1;
    return { jobId: r.jobId, generation: r.generation, state };
  });
  return {
    total: created.length,
    states,
    remaining: states.pending + states.running + states.failed,
    runs,
  };
}
