import { type EnqueueOutcome, retryDeadLetter } from "@idem/executor";
import type { DeadLetterRecord, JournalStore } from "@idem/journal";
import { connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import type { Config } from "@idem/schema";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { Command } from "commander";

/** Open dead letters: jobs that never produced an output (class, deliveries, last error). */
export async function listDeadLetteredJobs(journal: JournalStore): Promise<DeadLetterRecord[]> {
  return journal.deadLetters({ unresolved: true });
}

/**
 * `idem dlq retry JOB` for a dead-lettered job: resolves the dead letter (the job is queued again
 * with its deliveries reset) and, on JetStream, re-publishes it under Nats-Msg-Id
 * `<jobId>#retry-<n>`.
 * @throws NOT_FOUND when the job has no open dead letter; UNAVAILABLE when NATS gives no PubAck.
 */
export async function retryDeadLetteredJob(
  jobId: string,
  config: Config,
  journal: JournalStore,
  actor: string,
): Promise<EnqueueOutcome & { retry: number }> {
  if (!config.nats) return retryDeadLetter(jobId, { journal, actor });
  const nc = await connectNats(config.nats.url, "idem dlq retry");
  try {
    await ensureJobsStream(await jetstreamManager(nc), config.nats);
    const publisher = createJobPublisher({ js: jetstream(nc), nats: config.nats });
    return await retryDeadLetter(jobId, { journal, publisher, actor });
  } finally {
    await nc.drain().catch(() => {});
  }
}

/** `idem dlq` is registered by dlq.ts, which routes its job parts through this module. */
export function register(_program: Command): void {}
