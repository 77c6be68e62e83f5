import type { EventRecord } from "./events.js";
import type { JobRecord } from "./jobs.js";
import type { EffectRecord } from "./ledger.js";
import type { OutputRecord, RejectionRecord } from "./outputs.js";
import type { RunRecord } from "./runs.js";

/** What a prune removes: outputs recorded before `before`, each archived first. */
export interface PruneOptions {
  before: number;
  /** Only count what would be removed. */
  dryRun?: boolean;
  actor?: string;
  /** Takes each output with its history before it is deleted; a throw stops the prune there. */
  archive?: (entry: ArchivedOutput) => Promise<void> | void;
}

/** One pruned output with everything the journal held about it. */
export interface ArchivedOutput {
  output: OutputRecord;
  runs: RunRecord[];
  effects: EffectRecord[];
  events: EventRecord[];
  rejections: RejectionRecord[];
  job: JobRecord | undefined;
}

/** How many rows a prune removed (or would remove, dry). */
export interface PruneResult {
  outputs: number;
  runs: number;
  effects: number;
  events: number;
  rejections: number;
  jobs: number;
}

/** What only operators do: prune, integrity, backup. */
export interface JournalMaintenance {
  /**
   * Removes outputs recorded before `before` (with their runs, effects, events, rejections, job and
   * dead letters) through the prune guard, each after `archive` has taken it. Outputs with an active
   * run are kept. `dryRun` only counts. Safe to repeat: an interrupted prune resumes.
   */
  prune(options: PruneOptions): Promise<PruneResult>;
  /** Checks the store's integrity and that its immutability triggers are present; lists what is wrong. */
  integrity(): Promise<string[]>;
  /** A consistent copy of the journal while it is in use. */
  backup(file: string): Promise<void>;
}
