import type {
  ArchivedOutput,
  EffectRecord,
  EventRecord,
  JournalStore,
  OutputRecord,
  RejectionRecord,
  RunRecord,
} from "@idem/journal";
import { IdemError, isIdemError } from "@idem/schema";
import { approvalHistory, type ShownApproval } from "../approvals/approval-history.js";
import { findInArchive } from "../archive/find-in-archive.js";
import type { ReplayLineage } from "../replay/effect-filter.js";

/** One effect ledger row as `idem show` lists it. */
export interface ShownEffect {
  key: string;
  generation: number;
  kind: string;
  state: string;
  detail: Record<string, unknown> | null;
  /**
   * When the ledger last wrote this row (epoch ms): the state is what it saw then, not a probe of
   * the target now (an audit or a replay's dry run asks the target). Absent in archives.
   */
  updatedAt?: number;
}

/** One replayed generation's lineage, as `idem show` lists it: who, why, what, and of which generation. */
export interface ShownLineage extends ReplayLineage {
  /** The generation the replay created. */
  generation: number;
  /** When it was created (epoch milliseconds). */
  at: number;
}

/** Everything about one job (`idem show JOB --json`): its output, runs, effects, events and rejections. */
export interface JobView {
  output: OutputRecord;
  /** Every generation, oldest first; each with its effect filter (`only`) and lineage (`replay`). */
  runs: RunRecord[];
  /** The replayed generations' lineage, oldest first (empty when it was never replayed). */
  lineage: ShownLineage[];
  effects: ShownEffect[];
  events: EventRecord[];
  rejections: RejectionRecord[];
  /** Its approvals (docs/approvals.md): each request and decision, who, when and why. */
  approvals: ShownApproval[];
  /** Set when the job was read from the prune archive instead of the journal. */
  archived?: true;
}

/**
 * A job whose recorded output row is damaged (docs/runbook.md, "A damaged output"): what is wrong
 * with it instead of the output, and the rest of the job as `JobView` has it.
 */
export interface DamagedJobView extends Omit<JobView, "output" | "archived"> {
  output: null;
  damaged: { jobId: string; problem: string };
}

/**
 * A job as the journal holds it: its output, every run generation, every generation's ledger rows,
 * its events and its rejected conflicting submissions (`idem show JOB`, the console's output
 * page). Read-only. The five reads are made at once, so on PostgreSQL the view waits for one round
 * trip, not five; each read is on its own (no snapshot across them).
 * @throws NOT_FOUND when no output is recorded for the job (a pruned one: see `showArchivedJob`);
 * INTEGRITY when its output row is damaged (see `showDamagedJob`).
 */
export async function showJob(journal: JournalStore, jobId: string): Promise<JobView> {
  const [output, rest] = await Promise.all([journal.outputs.get(jobId), historyOf(journal, jobId)]);
  if (!output) throw new IdemError("NOT_FOUND", `no output recorded for job ${jobId}`);
  return { output, ...rest };
}

/**
 * A job whose output row is damaged, as `idem show` lists it: the problem (from the INTEGRITY
 * error `showJob` threw, `details.problem`) and its runs, effects, events and rejections.
 */
export async function showDamagedJob(
  journal: JournalStore,
  jobId: string,
  problem: string,
): Promise<DamagedJobView> {
  return { output: null, damaged: { jobId, problem }, ...(await historyOf(journal, jobId)) };
}

/** Whether `showJob` refused the job because its output row is damaged; the problem if so. */
export function damagedOutputProblem(e: unknown): string | undefined {
  if (!isIdemError(e, "INTEGRITY") || e.details?.reason !== "damaged-output") return undefined;
  return String(e.details.problem);
}

async function historyOf(journal: JournalStore, jobId: string): Promise<Omit<JobView, "output">> {
  const [runs, effects, events, rejections] = await Promise.all([
    journal.runs.forJob(jobId),
    journal.ledger.forJob(jobId),
    journal.events.list({ jobId }),
    journal.outputs.rejections(jobId),
  ]);
  const shownRuns = runs.map(withLineage);
  return {
    runs: shownRuns,
    lineage: lineageOf(shownRuns),
    effects: effects.map(shownEffect),
    events,
    rejections,
    approvals: approvalHistory(events),
  };
}

/**
 * A pruned job as the archive in `archiveDir` holds it (see `findInArchive`), marked `archived`.
 * @throws NOT_FOUND when the archive has no such job.
 */
export function showArchivedJob(archiveDir: string, jobId: string): JobView {
  const entry: ArchivedOutput | undefined = findInArchive(archiveDir, jobId);
  if (!entry) throw new IdemError("NOT_FOUND", `job ${jobId} is not in the archive`);
  const runs = entry.runs.map(withLineage);
  return {
    output: entry.output,
    runs,
    lineage: lineageOf(runs),
    effects: entry.effects.map(shownEffect),
    events: entry.events,
    rejections: entry.rejections,
    approvals: approvalHistory(entry.events),
    archived: true,
  };
}

function shownEffect(e: EffectRecord): ShownEffect {
  return {
    key: e.key,
    generation: e.generation,
    kind: e.kind,
    state: e.state,
    detail: e.detail,
    ...(e.updatedAt === undefined ? {} : { updatedAt: e.updatedAt }),
  };
}

/** A run with its filter and lineage fields, null when it has none (archives written before them). */
function withLineage(r: RunRecord): RunRecord {
  return { ...r, only: r.only ?? null, replay: r.replay ?? null };
}

function lineageOf(runs: readonly RunRecord[]): ShownLineage[] {
  const out: ShownLineage[] = [];
  for (const r of runs) {
    if (r.replay) out.push({ generation: r.generation, at: r.createdAt, ...r.replay });
  }
  return out;
}
