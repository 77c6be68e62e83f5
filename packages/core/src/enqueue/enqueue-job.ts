import type { JournalStore } from "@idem/journal";
import type { JobPublisher } from "@idem/nats";
import { noopTracing, type TraceSpan, type Tracing } from "@idem/runtime";
import type { Job } from "@idem/schema";
import { IdemError, isIdemError, retryMsgId } from "@idem/schema";

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
 *
 * The enqueue is an `idem.enqueue` span (continuing `traceparent`, e.g. an HTTP caller's), and its
 * trace context travels with the job: kept with the job row (the embedded queue's delivery reads
 * it) and sent as the `traceparent` header of the publish. A job enqueued again keeps its first.
 * @throws JOB_CONFLICT when the job ID is enqueued with another input; UNAVAILABLE when the stream
 * gave no PubAck within `nats.publishRetryMs` (the outbox row stays: the executor republishes it).
 */
export async function enqueueJob(job: Job, options: EnqueueOptions): Promise<EnqueueOutcome> {
  const tracing = options.tracing ?? noopTracing;
  return tracing.inSpan(
    "idem.enqueue",
    {
      parent: options.traceparent,
      kind: "producer",
      attributes: { "idem.job_id": job.jobId, "idem.agent": job.agent },
    },
    (span) => enqueueTraced(job, options, span),
  );
}

/** How a job is enqueued: the journal, the publisher on JetStream, who, and its trace context. */
export interface EnqueueOptions {
  journal: JournalStore;
  publisher?: JobPublisher | undefined;
  actor?: string;
  /** This process's tracing, for the `idem.enqueue` span; default none. */
  tracing?: Tracing;
  /** The caller's W3C traceparent (an HTTP header) the enqueue continues; invalid ones are ignored. */
  traceparent?: string | null | undefined;
}

async function enqueueTraced(
  job: Job,
  options: EnqueueOptions,
  span: TraceSpan,
): Promise<EnqueueOutcome> {
  const { journal, publisher } = options;
  const traceparent = span.traceparent;
  const trace = traceparent === undefined ? {} : { traceparent };
  const actor = options.actor ?? "enqueue";
  // With a publisher the stream's PubAck is what the caller is told, so the outbox row need not be
  // fsynced first: a crash before the publish leaves it for the republish, and a failed publish is
  // made durable below before the caller hears of it.
  // On the embedded queue the journal writes the enqueue's event with the row, in one commit.
  const outbox = await journal.jobs.enqueue(job, {
    actor,
    durable: publisher === undefined,
    queueEvent: publisher === undefined,
    ...trace,
  });
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
    const pub = await publisher.publish(job, trace).catch(async (e: unknown) => {
      // The caller is told the executor republishes the job: the outbox row must outlive a power
      // loss from here on. A durable event carries it (the WAL is fsynced in order).
      await journal.events.append({
        jobId: job.jobId,
        type: "job.publish-failed",
        data: { error: e instanceof Error ? e.message : String(e) },
        actor,
      });
      throw e;
    });
    const duplicate = pub.duplicate || outbox.status === "duplicate";
    // The stream sequence and the event share one commit.
    await journal.jobs.setStreamSeq(job.jobId, pub.seq, event(duplicate, pub.stream, pub.seq));
    outcome = { jobId: job.jobId, stream: pub.stream, seq: pub.seq, duplicate };
  } else {
    const duplicate = outbox.status === "duplicate";
    outcome = { jobId: job.jobId, stream: "embedded", seq: outbox.seq, duplicate };
  }
  span.setAttributes({
    "idem.enqueue.stream": outcome.stream,
    "idem.enqueue.duplicate": outcome.duplicate,
  });
  return outcome;
}

/** A job of a batch that was not enqueued, and why. */
export interface EnqueueFailure {
  jobId: string;
  /** JOB_CONFLICT (refused), UNAVAILABLE (left in the outbox: the executor republishes it). */
  error: { code: "JOB_CONFLICT" | "UNAVAILABLE"; message: string };
}

/** What {@link enqueueJobs} did with each job, in the order given. */
export interface BatchEnqueueResult {
  /**
   * One entry per job given: its outcome, its failure, or `undefined` when it was not attempted
   * because the stream became unavailable first (nothing of it is written).
   */
  outcomes: (EnqueueOutcome | EnqueueFailure | undefined)[];
  /** Set when the batch stopped early: no PubAck came within `nats.publishRetryMs`. */
  stoppedBy?: IdemError;
}

/**
 * Enqueues many jobs with `concurrency` of them in flight (default 16), in the order given: the
 * journal's group commit and the pipelined publishes make a batch far cheaper than one process per
 * job. Each job is enqueued as by {@link enqueueJob} and is atomic on its own; the batch is not. A
 * conflict refuses that job alone. A publish with no PubAck within `nats.publishRetryMs` stops the
 * batch: jobs in flight stay in the outbox (the executor republishes them) and the rest are not
 * attempted. Safe to repeat: what is already enqueued comes back as a duplicate.
 * @throws anything else the journal or the stream throws, once the jobs in flight have settled.
 */
export async function enqueueJobs(
  jobs: readonly Job[],
  options: EnqueueOptions & {
    concurrency?: number;
    /** Called as each job settles (a progress bar). */
    onSettled?: (index: number, result: EnqueueOutcome | EnqueueFailure) => void;
  },
): Promise<BatchEnqueueResult> {
  const outcomes: BatchEnqueueResult["outcomes"] = new Array(jobs.length).fill(undefined);
  let next = 0;
  let stoppedBy: IdemError | undefined;
  let fatal: { error: unknown } | undefined;
  const worker = async () => {
    while (next < jobs.length && !stoppedBy && !fatal) {
      const i = next++;
      const job = jobs[i] as Job;
      let result: EnqueueOutcome | EnqueueFailure;
      try {
        result = await enqueueJob(job, options);
      } catch (e) {
        // Narrowly: a refused or unpublishable job is this job's outcome; anything else (a disk
        // full, a broken journal) ends the batch and reaches the caller.
        const code = isIdemError(e, "JOB_CONFLICT")
          ? "JOB_CONFLICT"
          : isIdemError(e, "UNAVAILABLE")
            ? "UNAVAILABLE"
            : undefined;
        if (code === undefined) {
          fatal ??= { error: e };
          return;
        }
        const err = e as IdemError;
        if (code === "UNAVAILABLE") stoppedBy ??= err;
        // The stream's own words (timeout, disconnected) say more than "publishing failed" alone.
        const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
        result = { jobId: job.jobId, error: { code, message: `${err.message}${cause}` } };
      }
      outcomes[i] = result;
      options.onSettled?.(i, result);
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency ?? 16, jobs.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (fatal) throw fatal.error;
  return stoppedBy ? { outcomes, stoppedBy } : { outcomes };
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
  const row = await journal.jobs.get(jobId);
  if (!row) throw new IdemError("NOT_FOUND", `job ${jobId} is not in the journal`);
  const { retries } = await journal.deadLetters.resolve(jobId, {
    action: "retry",
    actor: options.actor ?? "dlq",
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  });
  if (!publisher) return { jobId, stream: "embedded", seq: 0, duplicate: false, retry: retries };
  const job: Job = { jobId, agent: row.agent, input: row.input as Job["input"] };
  // The retried job carries the trace context it was first enqueued under.
  const pub = await publisher.publish(job, {
    msgId: retryMsgId(jobId, retries),
    ...(row.traceparent === undefined ? {} : { traceparent: row.traceparent }),
  });
  await journal.jobs.setStreamSeq(jobId, pub.seq);
  return { jobId, stream: pub.stream, seq: pub.seq, duplicate: pub.duplicate, retry: retries };
}
