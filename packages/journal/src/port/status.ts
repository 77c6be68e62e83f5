import type { EffectState, JobState, RunState } from "../domain/states.js";

/** Counts of outputs, latest runs, effects, rejections, open dead letters and jobs by state. */
export interface JournalStatus {
  outputs: number;
  rejections: number;
  /** Open (unresolved) dead letters. */
  deadLetters: number;
  /** The latest run of each output, by state. */
  runs: Record<RunState, number>;
  effects: Record<EffectState, number>;
  jobs: Record<JobState, number>;
  /**
   * Of the queued jobs, those waiting for a retry after a failed delivery (due later): `idem jobs`
   * calls them `waiting`, and the rest of `jobs.queued` (due now) `queued`.
   */
  jobsWaiting: number;
}
