import { sleep } from "@idem/core";
import { agentConsumerName, type JetStreamInspector, openJetStreamInspector } from "@idem/nats";
import { describeError, type NatsConfig } from "@idem/schema";
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
   * JetStream: true when the stream has a consumer for `agent` (an executor with another config
   * runs it): such jobs are left to it. Asked only for a job of an agent outside `known`.
   */
  servedElsewhere?: (agent: string) => Promise<boolean>;
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
 * `FULL_EVERY`th all of them again. `run()` never throws (a failed sweep is logged and tried
 * next time); `sweep()` returns how many it dead-lettered and throws what the journal throws.
 */
export function createUnknownAgentSweep(
  context: TransportContext,
  options: UnknownAgentSweepOptions,
): { run(): Promise<void>; sweep(): Promise<number> } {
  const { journal, log, clock, owner } = context;
  const intervalMs = options.intervalMs ?? 1_000;
  let sweeps = 0;
  let lastStart: number | undefined;

  async function sweep(): Promise<number> {
    const started = clock.now();
    const since = lastStart === undefined || sweeps % FULL_EVERY === 0 ? 0 : lastStart - OVERLAP_MS;
    sweeps += 1;
    lastStart = started;
    const rows = await journal.jobs.pending({ since });
    let dead = 0;
    const elsewhere = new Map<string, boolean>();
    let announced: Set<string> | undefined;
    for (const row of rows) {
      if (options.known.has(row.agent) || row.state !== "queued" || row.deliveries > 0) continue;
      announced ??= await announcedAgents(journal);
      if (announced.has(row.agent)) continue;
      if (options.servedElsewhere) {
        let served = elsewhere.get(row.agent);
        if (served === undefined) {
          served = await options.servedElsewhere(row.agent);
          elsewhere.set(row.agent, served);
        }
        if (served) continue;
      }
      const job = { jobId: row.jobId, agent: row.agent, input: row.input as never };
      const claim = await journal.jobs.claim(job, { owner, leaseMs: 30_000 });
      if (claim.status !== "acquired") continue;
      const error = `no executor runs agent "${row.agent}": the config has no agents.${row.agent} (configure it, then idem dlq retry ${row.jobId})`;
      await journal.deadLetters.add(
        row.jobId,
        { class: "unknown-agent", error, deliveries: 0, agent: row.agent },
        claim.lease,
      );
      log.error(
        { jobId: row.jobId, agent: row.agent, class: "unknown-agent" },
        "job for an unknown agent: dead-lettered",
      );
      await context.deadLettered(row.jobId);
      dead += 1;
    }
    return dead;
  }

  return {
    sweep,
    async run() {
      while (!context.stopSignal.aborted) {
        try {
          await sweep();
        } catch (e) {
          if (context.journalFailed()) return;
          log.warn({ err: describeError(e) }, "could not sweep jobs for unknown agents");
        }
        await sleep(intervalMs, context.stopSignal);
      }
    },
  };
}

/**
 * The JetStream side of the rule: whether the jobs stream has a durable consumer for an agent,
 * read through a read-only inspector opened on first use (a job for an unknown agent is rare, so
 * the usual executor never opens it). `close()` closes it. An inspector that cannot answer counts
 * as "served elsewhere": nothing is dead-lettered on a guess.
 */
export function jetStreamConsumers(nats: NatsConfig): {
  servedElsewhere(agent: string): Promise<boolean>;
  close(): Promise<void>;
} {
  let inspector: Promise<JetStreamInspector> | undefined;
  return {
    async servedElsewhere(agent) {
      try {
        inspector ??= openJetStreamInspector(nats.url, {
          timeoutMs: 5_000,
          name: "idem-executor-unknown-agents",
        });
        const found = await (await inspector).consumerConfig(nats.stream, agentConsumerName(agent));
        return found !== "missing";
      } catch {
        inspector = undefined;
        return true;
      }
    },
    async close() {
      const i = inspector;
      inspector = undefined;
      if (i !== undefined) await i.then((x) => x.close()).catch(() => {});
    },
  };
}
