import type { JournalStore, RunRecord } from "@idem/journal";
import { withJobPublisher } from "@idem/nats";
import { type Config, IdemError } from "@idem/schema";
import { type EnqueueOutcome, retryDeadLetter } from "../enqueue/index.js";

/** What `retryDead` did: a new generation of a dead run, or a dead-lettered job queued again. */
export type RetryOutcome =
  | { run: RunRecord; job?: undefined }
  | { job: EnqueueOutcome & { retry: number }; run?: undefined };

/**
 * `idem dlq retry JOB`: a job with an output whose latest run is dead gets a new run generation
 * (pending; its interpreter probes every effect again, so nothing applied is applied twice); a job
 * with no output but an open dead letter is queued again (resolving the dead letter; on JetStream
 * published again under Nats-Msg-Id `<jobId>#retry-<n>`). Not idempotent: each call on a dead run
 * that is dead again makes one more generation; a dead letter already retried is not found again.
 * @throws NOT_FOUND when the job has neither an output nor an open dead letter; INVALID_STATE when
 * its latest run is not dead; UNAVAILABLE when NATS gives no PubAck.
 */
export async function retryDead(
  jobId: string,
  options: { config: Config; journal: JournalStore; actor: string },
): Promise<RetryOutcome> {
  const { config, journal, actor } = options;
  const run = await journal.runs.latest(jobId);
  if (!run) {
    if ((await journal.deadLetters.list({ unresolved: true })).some((d) => d.jobId === jobId)) {
      const job = await withJobPublisher(config, "idem dlq retry", (publisher) =>
        retryDeadLetter(jobId, { journal, actor, ...(publisher && { publisher }) }),
      );
      return { job };
    }
    throw new IdemError("NOT_FOUND", `no output and no dead letter for job ${jobId}`, {
      details: { jobId },
    });
  }
  if (run.state !== "dead") {
    throw new IdemError(
      "INVALID_STATE",
      `the latest run of ${jobId} is ${run.state}, not dead: nothing to retry (idem replay makes a new generation of any output)`,
      { details: { jobId, state: run.state } },
    );
  }
  const next = (await journal.runs.replay({ jobIds: [jobId] }, { actor }))[0];
  if (!next) {
    throw new IdemError("INVALID_STATE", `job ${jobId} could not be retried`, {
      details: { jobId },
    });
  }
  return { run: next };
}
