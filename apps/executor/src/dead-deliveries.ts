import { DEAD_HOLDER_SWEEP_MS, jobsOfDeadHolders } from "@idem/core";
import type { JetStreamJobs } from "@idem/nats";
import { describeError } from "@idem/schema";
import type { TransportContext } from "./transport.js";

/** A running sweep for the JetStream deliveries of dead executors. */
export interface DeadDeliverySweep {
  /** One sweep now (the timer's, or a test's); never throws: a failure is logged. */
  sweep(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Takes over, within about {@link DEAD_HOLDER_SWEEP_MS}, the jobs an executor that died on this
 * host was running (SIGKILLed, crashed: its owner ID is provably dead) for the agents this
 * executor consumes: their journal leases are ended and their messages nak'd on the dead
 * consumer's behalf (`JetStreamJobs.endDelivery`), so JetStream delivers them again at once,
 * instead of after the ack wait (5 minutes by default) that the dead process can never end. The
 * redelivery then claims the job as an expired one (a takeover event naming the dead owner) and
 * runs it; it counts as a delivery, as the lapse of the ack wait would have.
 *
 * Each message is ended once per process; another executor of the same host may end it too (the
 * server ignores a nak of a message already queued for redelivery). A holder on another host, or
 * one that cannot be told dead, keeps its delivery until its ack wait ends.
 */
export function startDeadDeliverySweep(
  context: TransportContext,
  jobs: JetStreamJobs,
  everyMs = DEAD_HOLDER_SWEEP_MS,
): DeadDeliverySweep {
  const { journal, log } = context;
  /** `<jobId>@<stream seq>` of the deliveries this process ended already. */
  const ended = new Set<string>();
  let running: Promise<void> | undefined;

  async function once(): Promise<void> {
    const dead = await jobsOfDeadHolders(journal.jobs, { self: context.owner });
    const mine = dead.jobs.filter(
      (j) =>
        j.streamSeq !== null &&
        context.agents.includes(j.agent) &&
        !ended.has(`${j.jobId}@${j.streamSeq}`),
    );
    if (mine.length === 0) return;
    // The leases first: the redelivery's claim then finds the job free.
    await journal.jobs.expireLeasesOf(dead.owners);
    const taken: string[] = [];
    for (const j of mine) {
      ended.add(`${j.jobId}@${j.streamSeq}`);
      if (await jobs.endDelivery(j.agent, j.streamSeq as number, j.deliveries)) taken.push(j.jobId);
    }
    log.warn(
      { event: "executor.dead-holders", owners: dead.owners, jobs: taken },
      "executors dead on this host held these jobs' deliveries: delivering them again now",
    );
  }

  const sweep = async () => {
    if (running !== undefined) return running;
    running = once()
      .catch((e: unknown) =>
        log.warn({ err: describeError(e) }, "dead-holder sweep failed; trying again"),
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(() => void sweep(), everyMs);
  timer.unref();
  return {
    sweep,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
