import type { EffectState, JobState, RunState } from "../domain/states.js";

/** Counts of outputs, latest runs, effects, rejections, open dead letters and jobs by state. */
export interface JournalStatus {
  outputs: number;
  /** Rows of `rejections`: each distinct conflicting content refused for a job. */
  rejections: number;
  /**
   * The conflicting bodies kept per job at most (REJECTED_BODIES_PER_JOB), and how many were not
   * kept over it (their rows hold the hash, source and time only; `body` empty).
   */
  rejectedBodies: { perJob: number; dropped: number };
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
