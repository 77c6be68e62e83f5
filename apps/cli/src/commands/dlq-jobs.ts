import { type EnqueueOutcome, retryDeadLetter } from "@idem/core";
import type { DeadLetterRecord, JournalStore } from "@idem/journal";
import { withJobPublisher } from "@idem/nats";
import type { Config } from "@idem/schema";
import type { Command } from "commander";

/** Open dead letters: jobs that never produced an output (class, deliveries, last error). */
export async function listDeadLetteredJobs(journal: JournalStore): Promise<DeadLetterRecord[]> {
  return journal.deadLetters.list({ unresolved: true });
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
  return withJobPublisher(config, "idem dlq retry", (publisher) =>
    retryDeadLetter(jobId, { journal, publisher, actor }),
  );
}

/** `idem dlq` is registered by dlq.ts, which routes its job parts through this module. */
export function register(_program: Command): void {}
