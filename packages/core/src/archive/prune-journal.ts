import type { JournalStore, PruneResult } from "@idem/journal";
import { type Config, checkConfigInvariants, IdemError } from "@idem/schema";
import { ArchiveWriter } from "./archive-writer.js";

const DAY_MS = 86_400_000;

/** What a prune did (or, dry, would do): the cutoff, the archive file written, and the counts removed. */
export interface PruneReport extends PruneResult {
  /** Outputs recorded before this time were candidates. */
  before: number;
  /** The archive file, or null when nothing was archived (a dry run, or nothing old enough). */
  archive: string | null;
}

/**
 * The prune policy: the time before which outputs may be pruned at `now`, or undefined when
 * `journal.retentionDays` is not set (idem keeps everything). Pure.
 * @throws INVARIANT_VIOLATION when the config breaks invariant 7 (retention inside the redelivery
 * horizon): pruning then could forget a job its queue can still redeliver.
 */
export function pruneCutoff(config: Config, now: number): number | undefined {
  const days = config.journal.retentionDays;
  if (days === null) return undefined;
  const violations = checkConfigInvariants(config);
  if (violations.length > 0) {
    throw new IdemError(
      "INVARIANT_VIOLATION",
      `refusing to prune: the config breaks invariant 7\n${violations
        .map((v) => `  ${v.key}: ${v.message} (${v.fix})`)
        .join("\n")}`,
      { details: { violations } },
    );
  }
  return now - days * DAY_MS;
}

/**
 * `idem prune`: archives to `journal.archiveDir` (one JSONL file per prune, each output fsynced
 * there before the journal deletes it) and removes the outputs recorded before the policy's cutoff,
 * with their runs, effects, events, rejections and job; outputs whose run is still active are kept.
 * `dryRun` only counts and writes nothing. Safe to repeat: a second prune finds nothing old enough
 * and writes no archive. A crash mid-prune leaves each output in the journal, or archived and
 * removed. Resolves to undefined when retention is not set.
 * @throws INVARIANT_VIOLATION as `pruneCutoff`; archive write errors propagate (the output whose
 * line failed stays in the journal).
 */
export async function pruneJournal(
  journal: JournalStore,
  options: { config: Config; now: number; dryRun?: boolean; actor: string },
): Promise<PruneReport | undefined> {
  const { config, now } = options;
  const before = pruneCutoff(config, now);
  if (before === undefined) return undefined;
  const dryRun = options.dryRun ?? false;
  const archive = dryRun ? undefined : new ArchiveWriter(config.journal.archiveDir, now);
  let result: PruneResult;
  try {
    result = await journal.maintenance.prune({
      before,
      dryRun,
      actor: options.actor,
      ...(archive && { archive: (entry) => archive.write(entry) }),
    });
  } finally {
    archive?.close();
  }
  return { before, archive: archive && archive.count > 0 ? archive.file : null, ...result };
}
