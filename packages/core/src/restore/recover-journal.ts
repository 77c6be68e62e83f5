import type { JournalStore } from "@idem/journal";
import { type Config, JobSchema } from "@idem/schema";
import { submitOutput } from "../submit/submit-output.js";

/** What `recoverJournal` brought back (or, in a dry run, would bring back) from another journal. */
export interface RecoveryReport {
  /** Outputs the source holds and the target did not: recorded now (or to be recorded). */
  outputs: {
    recorded: string[];
    /** Already in the target with the same content. */
    present: number;
    /** The target holds another output for the job (kept; the source's listed, not recorded). */
    conflicts: string[];
    /** Refused by the checks every submission passes (the config no longer accepts them). */
    invalid: { jobId: string | null; problem: string }[];
  };
  /** Jobs the source's queue still waited on (queued or under a delivery's lease), without an output. */
  jobs: {
    enqueued: string[];
    /** Already queued in the target with the same input. */
    present: number;
    /** Answered: the target holds its output (brought back above, or recorded since). */
    answered: number;
    /** The target has the job ID with another input. */
    conflicts: string[];
    /** A row the source holds that is no valid job (a damaged journal): not enqueued. */
    invalid: { jobId: string; problem: string }[];
  };
  /** Dead letters open in the source and unknown to the target: listed, not re-enqueued. */
  deadLettered: string[];
  /** What of the source could not be read (a damaged journal), in words. */
  unreadable: string[];
  /** True when the source was read whole and everything in it is in the target now. */
  complete: boolean;
}

/** How `recoverJournal` runs. */
export interface RecoverJournalOptions {
  /** Only reads both journals and says what it would do. */
  dryRun?: boolean;
  /** Who is recorded as enqueuing the jobs (events). */
  actor?: string;
  /** Told each output or job as it is brought back (a progress line). */
  onItem?: (what: "output" | "job", jobId: string) => void;
}

const PAGE = 500;
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Brings into `target` what `source` holds and `target` lacks: every output (recorded through the
 * same checks as `idem submit`, source `recover`; its effects are then probed by the interpreter,
 * so one already at its target is found present, never applied twice), then every job the source's
 * queue still waited on without an output (enqueued with its input and trace context, so the
 * executor runs it: on JetStream the outbox publishes it again under its job ID). The case it is
 * made for: a journal restored from a backup, `source` the journal that was in place
 * (docs/runbook.md, "Restore a journal from a backup").
 *
 * Safe to repeat: what is in the target already is counted as present. Reads the source only; a
 * part of it that cannot be read (a damaged file) is named in `unreadable`, the rest is brought back.
 * @throws what the target journal throws (DISK_FULL, IO, UNAVAILABLE).
 */
export async function recoverJournal(
  target: JournalStore,
  source: JournalStore,
  config: Config,
  options: RecoverJournalOptions = {},
): Promise<RecoveryReport> {
  const report: RecoveryReport = {
    outputs: { recorded: [], present: 0, conflicts: [], invalid: [] },
    jobs: { enqueued: [], present: 0, answered: 0, conflicts: [], invalid: [] },
    deadLettered: [],
    unreadable: [],
    complete: false,
  };
  const broughtBack = new Set<string>();
  try {
    for (let afterSeq = 0; ; ) {
      const page = await source.outputs.page({ all: true }, { afterSeq, limit: PAGE });
      if (page.length === 0) break;
      afterSeq = (page[page.length - 1] as (typeof page)[number]).seq;
      for (const o of page) {
        const mine = await target.outputs.get(o.jobId);
        if (mine) {
          if (mine.contentHash === o.contentHash) report.outputs.present += 1;
          else report.outputs.conflicts.push(o.jobId);
          continue;
        }
        if (options.dryRun) {
          report.outputs.recorded.push(o.jobId);
          broughtBack.add(o.jobId);
          continue;
        }
        const r = await submitOutput({
          journal: target,
          config,
          raw: o.output,
          source: "recover",
          ...(o.traceparent !== undefined && { trace: { traceparent: o.traceparent } }),
        });
        if (r.status === "recorded" || r.status === "duplicate") {
          report.outputs.recorded.push(o.jobId);
          broughtBack.add(o.jobId);
          options.onItem?.("output", o.jobId);
        } else if (r.status === "conflict") report.outputs.conflicts.push(o.jobId);
        else
          report.outputs.invalid.push({
            jobId: r.jobId,
            problem: (r.issues ?? []).map((i) => `${i.path}: ${i.message}`).join("; "),
          });
      }
    }
  } catch (e) {
    report.unreadable.push(`outputs: ${messageOf(e)}`);
  }
  try {
    for (const entry of await source.jobs.list()) {
      if (broughtBack.has(entry.jobId) || (await target.outputs.has(entry.jobId))) {
        report.jobs.answered += 1;
        continue;
      }
      const mine = await target.jobs.get(entry.jobId);
      if (mine) {
        if (mine.inputHash === entry.inputHash) report.jobs.present += 1;
        else report.jobs.conflicts.push(entry.jobId);
        continue;
      }
      const row = await source.jobs.get(entry.jobId);
      if (!row) continue;
      const parsed = JobSchema.safeParse({ jobId: row.jobId, agent: row.agent, input: row.input });
      if (!parsed.success) {
        report.jobs.invalid.push({ jobId: row.jobId, problem: parsed.error.message });
        continue;
      }
      const job = { ...parsed.data, traceparent: row.traceparent };
      if (!options.dryRun) {
        const r = await target.jobs.enqueue(
          { jobId: job.jobId, agent: job.agent, input: job.input },
          {
            actor: options.actor ?? "recover",
            ...(job.traceparent !== undefined && { traceparent: job.traceparent }),
          },
        );
        if (r.status === "conflict") {
          report.jobs.conflicts.push(job.jobId);
          continue;
        }
        options.onItem?.("job", job.jobId);
      }
      report.jobs.enqueued.push(job.jobId);
    }
  } catch (e) {
    report.unreadable.push(`jobs: ${messageOf(e)}`);
  }
  try {
    const known = new Set(
      (await target.deadLetters.list({ unresolved: true })).map((d) => d.jobId),
    );
    for (const d of await source.deadLetters.list({ unresolved: true })) {
      if (known.has(d.jobId) || (await target.outputs.has(d.jobId))) continue;
      report.deadLettered.push(d.jobId);
    }
  } catch (e) {
    report.unreadable.push(`dead letters: ${messageOf(e)}`);
  }
  report.complete =
    report.unreadable.length === 0 &&
    report.outputs.invalid.length === 0 &&
    report.jobs.invalid.length === 0 &&
    (options.dryRun
      ? report.outputs.recorded.length === 0 && report.jobs.enqueued.length === 0
      : true);
  return report;
}
