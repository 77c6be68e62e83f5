import { IdemError, type Job } from "@idem/schema";

/**
 * An agent's raw output with `jobId` and `agent` filled in per the agent command protocol; present
 * ones must match the job.
 * @throws IdemError INVALID_INPUT naming the field that does not match
 */
export function completeOutput(raw: unknown, job: Job): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const o = raw as Record<string, unknown>;
  const issues = [];
  if (o.jobId !== undefined && o.jobId !== job.jobId)
    issues.push({ path: "jobId", message: `is "${String(o.jobId)}", the job is "${job.jobId}"` });
  if (o.agent !== undefined && o.agent !== job.agent)
    issues.push({
      path: "agent",
      message: `is "${String(o.agent)}", the job's agent is "${job.agent}"`,
    });
  if (issues.length > 0) {
    throw new IdemError(
      "INVALID_INPUT",
      `the agent's output does not match its job: ${issues.map((i) => `${i.path} ${i.message}`).join("; ")}`,
      { details: { issues } },
    );
  }
  return { ...o, jobId: job.jobId, agent: job.agent };
}
