import { sleep } from "@idem/core";
import type { JobLease, JournalStore } from "@idem/journal";
import { describeError, type Job } from "@idem/schema";
import type { Delivery } from "./delivery.js";
import type { ExecutorTransport, TransportContext } from "./transport.js";

/**
 * The embedded queue: claims due jobs from the journal's jobs table (leased for `queue.ackWaitMs`,
 * extended by the heartbeats) up to `queue.maxAckPending` at once, polling every `pollMs` when none
 * is due. A job delivered `queue.maxDeliver` times is dead-lettered by the claim itself. Settling
 * is the journal's: ack, later and giveUp write nothing more.
 */
export function createEmbeddedTransport(
  context: TransportContext,
  options: { pollMs: number },
): ExecutorTransport {
  const { journal, log, owner, agents, config, stopSignal: signal } = context;
  const queue = config.queue;
  const heartbeatMs = Math.max(20, Math.floor(queue.ackWaitMs / 3));
  let loop: Promise<void> | undefined;

  async function run(): Promise<void> {
    const pollMs = options.pollMs;
    while (!signal.aborted) {
      if (context.inFlight() >= queue.maxAckPending) {
        await context.anySettled();
        continue;
      }
      let claimed: Awaited<ReturnType<JournalStore["jobs"]["claimNext"]>>;
      try {
        claimed = await journal.jobs.claimNext({
          owner,
          leaseMs: queue.ackWaitMs,
          agents,
          maxDeliver: queue.maxDeliver,
          // Jobs whose last delivery lost its lease (this or another executor died running it)
          // are dead-lettered by the claim itself: counted and alerted on like the others.
          onDeadLettered: (jobIds) => {
            for (const jobId of jobIds) void context.deadLettered(jobId);
          },
        });
      } catch (e) {
        if (context.journalFailed()) return;
        log.warn({ err: describeError(e) }, "could not claim from the embedded queue");
        await sleep(pollMs, signal);
        continue;
      }
      if (!claimed) {
        // PostgreSQL wakes this at once on an enqueue from any host; pollMs stays the fallback.
        if (journal.waitForWork) await journal.waitForWork("jobs", pollMs, signal);
        else await sleep(pollMs, signal);
        continue;
      }
      const { lease, job: row } = claimed;
      if (context.isWorking(row.jobId)) {
        // Our own delivery of this job is still retrying its record (its lease lapsed while the
        // journal was unavailable): never run the agent a second time for it.
        continue;
      }
      const job: Job = { jobId: row.jobId, agent: row.agent, input: row.input as Job["input"] };
      let current: JobLease = lease;
      const delivery: Delivery = {
        job,
        deliveries: lease.deliveries,
        // The trace context kept with the job row when it was enqueued.
        traceparent: row.traceparent,
        claim: async () => ({ status: "acquired", lease, job: row }),
        heartbeat: async () => {
          current = await journal.jobs.extendLease(current, queue.ackWaitMs);
        },
        ack: async () => {},
        later: async () => {},
        giveUp: async () => {},
      };
      void context.deliver(delivery, heartbeatMs);
    }
  }

  return {
    async start() {
      loop = run();
    },
    async stop() {
      await loop;
    },
  };
}
