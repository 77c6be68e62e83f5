import type { JobLease } from "@idem/journal";
import type { UnconsumedJobMessage, UnconsumedJobs } from "@idem/nats";
import { describeError, sleep } from "@idem/schema";
import type { TransportContext } from "./transport.js";

/** The event an executor appends at start with the agents it runs (`data.agents`). */
export const EXECUTOR_AGENTS_EVENT = "executor.agents";
/**
 * The job ID its events are filed under: not a job (`#` never occurs in a job ID), so they are
 * read through the events' job index and no job's history shows them.
 */
export const EXECUTORS_EVENT_JOB = "#executors";

/** Notes in the journal which agents this executor runs, for the sweeps of other executors. */
export async function announceAgents(context: TransportContext): Promise<void> {
  await context.journal.events.append({
    jobId: EXECUTORS_EVENT_JOB,
    type: EXECUTOR_AGENTS_EVENT,
    data: { agents: [...context.agents] },
    actor: context.owner,
  });
}

/** Every agent some executor on this journal has announced. */
async function announcedAgents(journal: TransportContext["journal"]): Promise<Set<string>> {
  const out = new Set<string>();
  const events = await journal.events.list({
    jobId: EXECUTORS_EVENT_JOB,
    type: EXECUTOR_AGENTS_EVENT,
  });
  for (const e of events) {
    const agents = e.data?.agents;
    if (Array.isArray(agents)) for (const a of agents) if (typeof a === "string") out.add(a);
  }
  return out;
}

/** Options of {@link createUnknownAgentSweep}. */
export interface UnknownAgentSweepOptions {
  /** Every agent some executor of this config runs: the config's `agents` (and this executor's). */
  known: ReadonlySet<string>;
  /**
   * JetStream: the jobs stream, on the executor's connection. An agent with a consumer there (an
   * executor with another config runs it) is left to it; the messages of an agent without one,
   * published by any client, are dead-lettered too (see {@link createUnknownAgentSweep}).
   */
  stream?: UnconsumedJobs;
  /** Time between two sweeps; default 1 s. */
  intervalMs?: number;
}

/** How far back an incremental sweep looks, for clocks of several hosts that disagree. */
const OVERLAP_MS = 60_000;
/**
 * Every this many sweeps (10 minutes at the default interval), one reads every unfinished job
 * again: a job that `idem dlq retry` queued again keeps its creation time.
 */
const FULL_EVERY = 600;
/** The claim a sweep takes on a job before it dead-letters it. */
const SWEEP_LEASE_MS = 30_000;

/**
 * Dead-letters, at once and with class `unknown-agent`, every job that no executor can take: a job
 * still queued and never delivered whose agent no executor can run: not in this executor's config
 * `agents`, never announced by an executor on this journal (`executor.agents` events, appended by
 * every executor at start) and, on JetStream, without a consumer in the jobs stream. The rules that
 * keep it from stealing: only an executor that runs every agent of its config sweeps (one started
 * with an explicit agent list does not); an agent some executor of this journal or stream runs is
 * never unknown; and a job is taken with its in-progress claim first, so a delivery that holds it
 * elsewhere wins. Runs off the delivery path: the first sweep
 * reads every unfinished job, later ones only jobs created since (with an overlap), every
 * `FULL_EVERY`th all of them again. On JetStream each sweep then reads the stream's subjects (one
 * stream-info request): the messages of an unknown agent, including jobs another client published
 * with no journal row, are claimed (creating the row, as a delivery's claim does), dead-lettered and
 * purged, so each is dead-lettered once across sweeps and executors; a message another sweep's
 * claim holds is kept for the next sweep. `run()` never throws (a failed sweep is logged and tried
 * next time); `sweep()` returns how many it dead-lettered and throws what the journal or JetStream
 * throws.
 */
export function createUnknownAgentSweep(
  context: TransportContext,
  options: UnknownAgentSweepOptions,
): { run(): Promise<void>; sweep(): Promise<number> } {
  const { journal, log, clock, owner } = context;
  const intervalMs = options.intervalMs ?? 1_000;
  const stream = options.stream;
  let sweeps = 0;
  let lastStart: number | undefined;

  /** An inspector that cannot answer counts as "served elsewhere": nothing dead-lettered on a guess. */
  const servedElsewhere = async (agent: string) =>
    stream ? await stream.hasConsumer(agent).catch(() => true) : false;

  async function deadLetter(jobId: string, agent: string, lease: JobLease): Promise<void> {
    // The executor reads its config once, at start: advice to configure the agent must say to
    // restart it, or the retried job is dead-lettered again by the same executor.
    const error = `no executor runs agent "${agent}": executor ${owner} started with agents [${[...options.known].join(", ")}] and reads its config only at start, and no other executor on this journal announced ${agent}. Add agents.${agent} to the config (if it is not there yet), restart that executor (idem up or idem executor), then idem dlq retry ${jobId}`;
    await journal.deadLetters.add(
      jobId,
      { class: "unknown-agent", error, deliveries: 0, agent },
      lease,
    );
    log.error({ jobId, agent, class: "unknown-agent" }, "job for an unknown agent: dead-lettered");
    await context.deadLettered(jobId);
  }

  /** The jobs with a journal row (outbox or embedded queue). */
  async function sweepJournal(announced: () => Promise<Set<string>>): Promise<number> {
    const started = clock.now();
    const since = lastStart === undefined || sweeps % FULL_EVERY === 0 ? 0 : lastStart - OVERLAP_MS;
    sweeps += 1;
    lastStart = started;
    const rows = await journal.jobs.pending({ since });
    let dead = 0;
    const elsewhere = new Map<string, boolean>();
    for (const row of rows) {
      if (options.known.has(row.agent) || row.state !== "queued" || row.deliveries > 0) continue;
      if ((await announced()).has(row.agent)) continue;
      let served = elsewhere.get(row.agent);
      if (served === undefined) {
        served = await servedElsewhere(row.agent);
        elsewhere.set(row.agent, served);
      }
      if (served) continue;
      const job = { jobId: row.jobId, agent: row.agent, input: row.input as never };
      const claim = await journal.jobs.claim(job, { owner, leaseMs: SWEEP_LEASE_MS });
      if (claim.status !== "acquired") continue;
      await deadLetter(row.jobId, row.agent, claim.lease);
      dead += 1;
    }
    return dead;
  }

  /** The stream's messages of agents without a consumer; true when one is settled for good. */
  async function settleMessage(m: UnconsumedJobMessage, onDead: () => void): Promise<boolean> {
    if (!m.job) {
      log.error(
        { subject: m.subject, seq: m.seq, issues: m.issues },
        "not a valid job for its subject, which no executor consumes: purged",
      );
      return true;
    }
    const claim = await journal.jobs.claim(m.job, {
      owner,
      leaseMs: SWEEP_LEASE_MS,
      streamSeq: m.seq,
    });
    if (claim.status === "held") return false;
    if (claim.status === "conflict") {
      log.warn(
        { jobId: m.job.jobId, subject: m.subject, seq: m.seq },
        "a job with this ID but another input is already known: purged",
      );
    }
    if (claim.status !== "acquired") return true;
    await deadLetter(m.job.jobId, m.job.agent, claim.lease);
    onDead();
    return true;
  }

  async function sweep(): Promise<number> {
    let announcedNow: Set<string> | undefined;
    const announced = async () => {
      announcedNow ??= await announcedAgents(journal);
      return announcedNow;
    };
    let dead = await sweepJournal(announced);
    if (stream) {
      await stream.sweep({
        skip: async (agent) => options.known.has(agent) || (await announced()).has(agent),
        handle: (m) =>
          settleMessage(m, () => {
            dead += 1;
          }),
      });
    }
    return dead;
  }

  return {
    sweep,
    async run() {
      let failing = false;
      while (!context.stopSignal.aborted) {
        try {
          await sweep();
          failing = false;
        } catch (e) {
          if (context.journalFailed()) return;
          // Once per outage (NATS down fails every sweep), not once a second.
          if (!failing)
            log.warn({ err: describeError(e) }, "could not sweep jobs for unknown agents");
          failing = true;
        }
        await sleep(intervalMs, context.stopSignal);
      }
    },
  };
}
