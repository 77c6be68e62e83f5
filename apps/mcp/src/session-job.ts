import type { JournalStore } from "@idem/journal";
import { AGENT_PATTERN, IdemError, isJobId } from "@idem/schema";
import type { SessionJob } from "./mcp-context.js";

/**
 * The job a session named by its ID (and its agent, when given) works on: for a job enqueued
 * through this journal, its row's agent (a different one given is refused) and input, which
 * `job_input` answers; for another, the agent given.
 * @throws IdemError INVALID_INPUT for a malformed job ID or agent name, or a job the journal does
 * not know without an agent (naming `agent`); the journal's error when it cannot be read.
 */
export async function resolveJob(
  journal: JournalStore,
  jobId: string,
  agent?: string | undefined,
): Promise<SessionJob> {
  if (!isJobId(jobId))
    throw new IdemError(
      "INVALID_INPUT",
      `job ${JSON.stringify(String(jobId).slice(0, 100))} is not a job ID`,
      {
        details: { field: "job" },
      },
    );
  if (agent !== undefined && !AGENT_PATTERN.test(agent))
    throw new IdemError(
      "INVALID_INPUT",
      `agent ${JSON.stringify(agent.slice(0, 100))} is not an agent name`,
      {
        details: { field: "agent" },
      },
    );
  const row = await journal.jobs.get(jobId);
  if (!row) {
    if (agent !== undefined) return { jobId, agent };
    throw new IdemError(
      "INVALID_INPUT",
      `job ${jobId} is not in the journal: name its agent too (--agent, or &agent= on the HTTP URL)`,
      { details: { field: "agent" } },
    );
  }
  if (agent !== undefined && agent !== row.agent)
    throw new IdemError("INVALID_INPUT", `job ${jobId} is agent ${row.agent}'s, not ${agent}'s`, {
      details: { field: "agent" },
    });
  return { jobId, agent: row.agent, input: row.input };
}
