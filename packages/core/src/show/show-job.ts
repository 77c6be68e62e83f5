import type {
  ArchivedOutput,
  EffectRecord,
  EventRecord,
  JournalStore,
  OutputRecord,
  RejectionRecord,
  RunRecord,
} from "@idem/journal";
import { IdemError } from "@idem/schema";
import { findInArchive } from "../archive/find-in-archive.js";

/** One effect ledger row as `idem show` lists it. */
export interface ShownEffect {
  key: string;
  generation: number;
  kind: string;
  state: string;
  detail: Record<string, unknown> | null;
}

/** Everything about one job (`idem show JOB --json`): its output, runs, effects, events and rejections. */
export interface JobView {
  output: OutputRecord;
  runs: RunRecord[];
  effects: ShownEffect[];
  events: EventRecord[];
  rejections: RejectionRecord[];
  /** Set when the job was read from the prune archive instead of the journal. */
  archived?: true;
}

/**
 * A job as the journal holds it: its output, every run generation, every generation's ledger rows,
 * its events and its rejected conflicting submissions. Read-only.
 * @throws NOT_FOUND when no output is recorded for the job (a pruned one: see `showArchivedJob`).
 */
export async function showJob(journal: JournalStore, jobId: string): Promise<JobView> {
  const output = await journal.outputs.get(jobId);
  if (!output) throw new IdemError("NOT_FOUND", `no output recorded for job ${jobId}`);
  const effects = await journal.ledger.forJob(jobId);
  return {
    output,
    runs: await journal.runs.forJob(jobId),
    effects: effects.map(shownEffect),
    events: await journal.events.list({ jobId }),
    rejections: await journal.outputs.rejections(jobId),
  };
}

/**
 * A pruned job as the archive in `archiveDir` holds it (see `findInArchive`), marked `archived`.
 * @throws NOT_FOUND when the archive has no such job.
 */
export function showArchivedJob(archiveDir: string, jobId: string): JobView {
  const entry: ArchivedOutput | undefined = findInArchive(archiveDir, jobId);
  if (!entry) throw new IdemError("NOT_FOUND", `job ${jobId} is not in the archive`);
  return {
    output: entry.output,
    runs: entry.runs,
    effects: entry.effects.map(shownEffect),
    events: entry.events,
    rejections: entry.rejections,
    archived: true,
  };
}

function shownEffect(e: EffectRecord): ShownEffect {
  return { key: e.key, generation: e.generation, kind: e.kind, state: e.state, detail: e.detail };
}
