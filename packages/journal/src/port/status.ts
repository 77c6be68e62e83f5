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
}
