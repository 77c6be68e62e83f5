import { createDeadHolderSweep, type Delivery, RECOVERY_GRACE_MS } from "@idem/core";
import type { JobLease, JournalStore } from "@idem/journal";
import { createBackoff, describeError, isIdemError, type Job, sleep } from "@idem/schema";
import type { ExecutorTransport, TransportContext } from "./transport.js";

/**
 * The embedded queue: claims due jobs from the journal's jobs table (leased for `queue.ackWaitMs`,
 * extended by the heartbeats) up to `queue.maxAckPending` at once, polling every `pollMs` when none
 * is due. A job delivered `queue.maxDeliver` times is dead-lettered by the claim itself. Settling
 * is the journal's: ack, later and giveUp write nothing more. Before a claim (at most every
 * DEAD_HOLDER_SWEEP_MS) the leases of executors provably dead on this host are ended, so their
 * jobs are delivered again at once, not after `queue.ackWaitMs`.
 */
export function createEmbeddedTransport(
  context: TransportContext,
  options: { pollMs: number },
): ExecutorTransport {
  const { journal, log, owner, agents, config, stopSignal: signal } = context;
  const queue = config.queue;
  const heartbeatMs = Math.max(20, Math.floor(queue.ackWaitMs / 3));
  let loop: Promise<void> | undefined;
  /**
   * The claims' backoff while the journal is UNAVAILABLE (a PostgreSQL server gone or restarting):
   * from 250 ms (or `pollMs` when shorter) up to 5 s, never `pollMs` itself. An idle executor on
   * PostgreSQL polls every `pollMs` (minutes) and counts on its wake-ups: the claim a wake-up makes
   * right after a server restart can meet a pooled connection the restart killed, and waiting
   * `pollMs` then slept through every later wake-up (issue 36).
   */
  const outage = createBackoff({ initialMs: Math.min(options.pollMs, 250), maxMs: 5_000 });
  /** Set by an UNAVAILABLE claim: the next attempt waits out RECOVERY_GRACE_MS once it answers. */
  let recovering = false;
  const deadHolders = createDeadHolderSweep({
    holders: journal.jobs,
    clock: context.clock,
    self: owner,
  });

  async function run(): Promise<void> {
    const pollMs = options.pollMs;
    while (!signal.aborted) {
      if (context.inFlight() >= queue.maxAckPending) {
        await context.anySettled();
        continue;
      }
      let claimed: Awaited<ReturnType<JournalStore["jobs"]["claimNext"]>>;
      try {
        if (recovering) {
          // Answers only once the journal is back (else UNAVAILABLE again, below). Leases lapsed
          // during the outage: outputs still held in memory by this and other executors are given
          // time to be recorded first (their retries back off at most RECORD_RETRY_MAX_MS), so a
          // job they ran is found recorded by the claim, not run again here.
          await journal.jobs.count({ since: context.clock.now() });
          recovering = false;
          outage.reset();
          log.info({ graceMs: RECOVERY_GRACE_MS }, "the journal is back: claiming again shortly");
          await sleep(RECOVERY_GRACE_MS, signal);
          continue;
        }
        const swept = await deadHolders.sweep();
        if (swept && swept.expired > 0) {
          log.warn(
            { event: "executor.dead-holders", owners: swept.owners, leases: swept.expired },
            "the holders of jobs are dead on this host: delivering their jobs again",
          );
        }
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
        const unavailable = isIdemError(e, "UNAVAILABLE");
        // Any other failure (SQLite busy beyond its timeout) is tried again after a poll, 5 s at most.
        const delay = unavailable ? outage.next() : Math.min(pollMs, 5_000);
        log.warn(
          { err: describeError(e), retryInMs: delay },
          unavailable
            ? "the journal is unavailable: not claiming; retrying"
            : "could not claim from the embedded queue",
        );
        if (unavailable) recovering = true;
        await sleep(delay, signal);
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
