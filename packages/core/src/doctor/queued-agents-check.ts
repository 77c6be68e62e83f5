import type { JournalStore } from "@idem/journal";
import { aliasOf, type Config } from "@idem/schema";
import type { AddFinding } from "./finding.js";

/**
 * Queued jobs that no configured agent can take: one finding per unknown agent, naming it and how
 * many of its jobs wait (jobs with neither an output nor a dead letter). On the embedded queue the
 * executor runs this config's agents, so such jobs wait forever: a violation. With NATS, executors
 * on other hosts may run other agents: a warning. Reads only.
 */
export async function checkQueuedAgents(
  journal: JournalStore,
  config: Config,
  add: AddFinding,
): Promise<void> {
  const counts = new Map<string, number>();
  for (const job of await journal.jobs.pending({ since: 0 })) {
    if (aliasOf(config.agents, job.agent)) continue;
    counts.set(job.agent, (counts.get(job.agent) ?? 0) + 1);
  }
  for (const [agent, count] of counts) {
    add(
      config.nats ? "warning" : "violation",
      `agents.${agent}`,
      `${count} queued job(s) for agent "${agent}", which no configured agent matches (unknown-agent)${config.nats ? " here; an executor on another host may run it" : ": they wait forever"}`,
      `add agents.${agent} to the config, or dead-letter the jobs: the executor dead-letters them as unknown-agent once it runs with this config`,
    );
  }
}
