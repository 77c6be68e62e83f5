import type { JournalStore, RunRecord } from "@idem/journal";
import { IdemError } from "@idem/schema";
import type { JobView, ShownLineage } from "../show/show-job.js";

/**
 * An output's page: the same view as `showJob` (`idem show JOB --json`), its five reads (the
 * output, its runs, its ledger rows, its events, its rejections) made at once instead of one after
 * another, so that on PostgreSQL the page waits for one round trip, not five. Read-only; each read
 * is on its own (no snapshot across them), as `showJob`'s are.
 * @throws NOT_FOUND when no output is recorded for the job (a pruned one: see `showArchivedJob`).
 */
export async function readOutputPage(journal: JournalStore, jobId: string): Promise<JobView> {
  const [output, runs, effects, events, rejections] = await Promise.all([
    journal.outputs.get(jobId),
    journal.runs.forJob(jobId),
    journal.ledger.forJob(jobId),
    journal.events.list({ jobId }),
    journal.outputs.rejections(jobId),
  ]);
  if (!output) throw new IdemError("NOT_FOUND", `no output recorded for job ${jobId}`);
  const withLineage = runs.map(
    (r): RunRecord => ({ ...r, only: r.only ?? null, replay: r.replay ?? null }),
  );
  const lineage: ShownLineage[] = [];
  for (const r of withLineage) {
    if (r.replay) lineage.push({ generation: r.generation, at: r.createdAt, ...r.replay });
  }
  return {
    output,
    runs: withLineage,
    lineage,
    effects: effects.map((e) => ({
      key: e.key,
      generation: e.generation,
      kind: e.kind,
      state: e.state,
      detail: e.detail,
    })),
    events,
    rejections,
  };
}
