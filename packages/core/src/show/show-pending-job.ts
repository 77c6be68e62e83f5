import type { DeadLetterRecord, EventRecord, JournalStore } from "@idem/journal";
import { type Config, canonicalJson, IdemError } from "@idem/schema";
import { describeWaitingJob, type WaitingJob } from "../status/list-jobs.js";

/** How much of a job's input `idem show` prints. */
const INPUT_SUMMARY_CHARS = 200;

/** A job the journal knows with no output recorded (`idem show JOB --json` then). */
export interface PendingJobView {
  output: null;
  /**
   * Where it stands: a waiting job's state (`queued`, `waiting`, `leased`, `expired`) or
   * `dead-lettered`, with holder, lease end, next try and what happens next.
   */
  job: Omit<WaitingJob, "state"> & { state: WaitingJob["state"] | "dead-lettered" };
  /** Its input: size in bytes of its canonical JSON, and the first characters of it. */
  input: { bytes: number; summary: string };
  /** Its open dead letter; null unless it is dead-lettered now. */
  deadLetter: DeadLetterRecord | null;
  events: EventRecord[];
}

/**
 * A job without an output as the journal holds it (its queue/outbox row): queued, backing off,
 * leased (by whom, until when), its lease ended, or dead-lettered; its input in short, its dead
 * letter and its events. Read-only.
 * @throws NOT_FOUND when the journal has no such job (neither enqueued nor delivered here).
 */
export async function showPendingJob(
  journal: JournalStore,
  config: Config,
  jobId: string,
  now: number = Date.now(),
): Promise<PendingJobView> {
  const [row, events] = await Promise.all([
    journal.jobs.get(jobId),
    journal.events.list({ jobId }),
  ]);
  if (!row) throw new IdemError("NOT_FOUND", `no output and no job ${jobId} in the journal`);
  // Only a dead job has an open dead letter (the open ones are few: each waits for a person).
  const deadLetter =
    row.state === "dead"
      ? ((await journal.deadLetters.list({ unresolved: true })).find((d) => d.jobId === jobId) ??
        null)
      : null;
  const input = canonicalJson(row.input);
  const inputSummary = {
    bytes: Buffer.byteLength(input, "utf8"),
    summary: input.length > INPUT_SUMMARY_CHARS ? `${input.slice(0, INPUT_SUMMARY_CHARS)}…` : input,
  };
  const waiting = describeWaitingJob(row, now, config);
  const job: PendingJobView["job"] =
    row.state === "dead"
      ? {
          ...waiting,
          state: "dead-lettered",
          leaseUntil: null,
          nextAt: null,
          next: `dead-lettered (${deadLetter?.class ?? row.lastClass ?? "?"}) after ${row.deliveries} deliveries: fix the cause, then idem dlq retry ${jobId}`,
        }
      : waiting;
  return { output: null, job, input: inputSummary, deadLetter, events };
}
