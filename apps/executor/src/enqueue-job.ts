import type { JournalStore } from "@idem/journal";
import type { JobPublisher } from "@idem/nats";
import type { Job } from "@idem/schema";
import { IdemError, retryMsgId } from "@idem/schema";

/** The answer of `idem enqueue --json`. */
export interface EnqueueOutcome {
  jobId: string;
  /** The JetStream stream, or `"embedded"` on the journal's own queue. */
  stream: string;
  seq: number;
  duplicate: boolean;
}

/**
 * Enqueues a job: first into the journal's `jobs` table (the outbox, and the queue itself on the
 * embedded transport), then, with a publisher, onto JetStream with `Nats-Msg-Id = jobId`. Safe to
 * repeat: a job already enqueued with the same input is a duplicate (success), published again under
 * the same msg id so a publish lost last time is not lost for good.
 * @throws JOB_CONFLICT when the job ID is enqueued with another input; UNAVAILABLE when the stream
 * gave no PubAck within `nats.publishRetryMs` (the outbox row stays: the executor republishes it).
 */
export async function enqueueJob(
  job: Job,
  options: { journal: JournalStore; publisher?: JobPublisher; actor?: string },
): Promise<EnqueueOutcome> {
  const { journal, publisher } = options;
  const actor = options.actor ?? "enqueue";
  // With a publisher the stream's PubAck is what the caller is told, so the outbox row need not be
  // fsynced first: a crash before the publish leaves it for the republish, and a failed publish is
  // made durable below before the caller hears of it.
  const outbox = await journal.enqueueJob(job, { actor, durable: publisher === undefined });
  if (outbox.status === "conflict") {
    throw new IdemError("JOB_CONFLICT", `job ${job.jobId} is already enqueued with another input`, {
      details: { jobId: job.jobId },
    });
  }
  const event = (duplicate: boolean, stream: string, seq: number) => ({
    type: duplicate ? "job.duplicate" : "job.enqueued",
    data: { stream, seq },
    actor,
  });
  let outcome: EnqueueOutcome;
  if (publisher) {
    const pub = await publisher.publish(job).catch(async (e: unknown) => {
      // The caller is told the executor republishes the job: the outbox row must outlive a power
      // loss from here on. A durable event carries it (the WAL is fsynced in order).
      await journal.appendEvent({
        jobId: job.jobId,
        type: "job.publish-failed",
        data: { error: e instanceof Error ? e.message : String(e) },
        actor,
      });
      throw e;
    });
    const duplicate = pub.duplicate || outbox.status === "duplicate";
    // The stream sequence and the event share one commit.
    await journal.setJobStreamSeq(job.jobId, pub.seq, event(duplicate, pub.stream, pub.seq));
    outcome = { jobId: job.jobId, stream: pub.stream, seq: pub.seq, duplicate };
  } else {
    const duplicate = outbox.status === "duplicate";
    outcome = { jobId: job.jobId, stream: "embedded", seq: outbox.seq, duplicate };
    await journal.appendEvent({ jobId: job.jobId, ...event(duplicate, "embedded", outbox.seq) });
  }
  return outcome;
}

/**
 * `idem dlq retry JOB` for a dead-lettered job: resolves its dead letter (the journal returns the
 * job to queued, deliveries reset) and, on JetStream, publishes it again under Nats-Msg-Id
 * `<jobId>#retry-<n>` so the stream's duplicate window does not swallow it.
 * @throws NOT_FOUND when the job has no open dead letter or no job row.
 */
export async function retryDeadLetter(
  jobId: string,
  options: { journal: JournalStore; publisher?: JobPublisher; actor?: string; reason?: string },
): Promise<EnqueueOutcome & { retry: number }> {
  const { journal, publisher } = options;
  const row = await journal.getJob(jobId);
  if (!row) throw new IdemError("NOT_FOUND", `job ${jobId} is not in the journal`);
  const { retries } = await journal.resolveDeadLetter(jobId, {
    action: "retry",
    actor: options.actor ?? "dlq",
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  });
  if (!publisher) return { jobId, stream: "embedded", seq: 0, duplicate: false, retry: retries };
  const job: Job = { jobId, agent: row.agent, input: row.input as Job["input"] };
  const pub = await publisher.publish(job, { msgId: retryMsgId(jobId, retries) });
  await journal.setJobStreamSeq(jobId, pub.seq);
  return { jobId, stream: pub.stream, seq: pub.seq, duplicate: pub.duplicate, retry: retries };
}
