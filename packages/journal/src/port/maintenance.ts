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
  /**
   * Checks the store's integrity and that its immutability triggers are present; lists what is
   * wrong. On SQLite the verdict of `integrity_check` is kept beside the file: a failure marks the
   * journal damaged, so every later open but `idem doctor`'s and `idem backup`'s refuses it
   * (docs/runbook.md, "A damaged journal"); a pass clears an earlier mark.
   */
  integrity(): Promise<string[]>;
  /**
   * The check a process runs before it serves (the executor, the interpreter, the console): on
   * SQLite `quick_check` (every page's structure, one pass over the file; not whether indexes match
   * their tables, which `integrity` checks) and the immutability triggers, a failed `quick_check`
   * marking the journal damaged as `integrity` does; on PostgreSQL the triggers. Lists what is
   * wrong.
   */
  verify(): Promise<string[]>;
  /** A consistent copy of the journal while it is in use. */
  backup(file: string): Promise<void>;
}
