import { readStatus, recordOutput, showJob } from "@idem/core";
import { effectKey, isIdemError } from "@idem/schema";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { DraftOutput, JobDraft } from "./job-draft.js";
import type { FinishMode, McpContext, SessionJob } from "./mcp-context.js";
import {
  failureResult,
  inputSchemaOf,
  parseArguments,
  type SessionTool,
  toolError,
  toolResult,
} from "./tool-results.js";

const NoArguments = z.strictObject({});
const FinishArguments = z.strictObject({
  summary: z
    .string()
    .max(65_536)
    .optional()
    .describe("What the agent did, in a sentence or a few: kept with the output."),
  allowEmpty: z
    .boolean()
    .optional()
    .describe(
      "True to finish with no effect staged, when no effect is what the job needs: without it, finish refuses an empty draft (an output with no effects spends the job).",
    ),
});

/** Why a job tool cannot answer in a session bound to no job. */
const NO_JOB =
  "this session is bound to no job: connect with the job's ID (idem mcp --job <id>, or ?job=<id> on the HTTP URL; docs/mcp.md)";

/** A session's job, its draft and how `finish` ends it. */
export interface JobBinding {
  job: SessionJob;
  draft: JobDraft;
  finish: FinishMode;
}

/**
 * The tools of a session's job (docs/mcp.md, "The tools"): `finish`, `job_input`, `job_output`,
 * and `journal_status`, which needs no job.
 */
export function jobTools(ctx: McpContext, binding: JobBinding | undefined): SessionTool[] {
  return [
    finishTool(ctx, binding),
    jobInputTool(ctx, binding),
    jobOutputTool(ctx, binding),
    statusTool(ctx),
  ];
}

function finishTool(ctx: McpContext, binding: JobBinding | undefined): SessionTool {
  const recording = binding?.finish !== "seal";
  return {
    definition: {
      name: "finish",
      title: "Finish the job's output",
      description: recording
        ? "Records this job's output (the staged effects, in order, and the summary) in idem's journal; from then on idem applies each effect once. First write wins: calling it again with the same output answers duplicate; another output for a recorded job is refused as a conflict. Nothing can be staged after it. With nothing staged it refuses unless allowEmpty is true."
        : "Ends this job's output (the staged effects, in order, and the summary): the idem executor records it when you exit with code 0, and idem then applies each effect once. If you fail or are killed before exiting 0, nothing is recorded and the job runs again. Nothing can be staged after it. With nothing staged it refuses unless allowEmpty is true.",
      inputSchema: inputSchemaOf(FinishArguments),
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
    },
    async call(args) {
      if (!binding) return toolError(NO_JOB, { code: "INVALID_STATE" });
      const parsed = parseArguments(FinishArguments, args);
      if (!parsed.ok) return parsed.result;
      const { draft, job } = binding;
      try {
        const f = await draft.finish(parsed.value.summary, parsed.value.allowEmpty === true);
        if (!("output" in f))
          return toolError(f.message, {
            status: f.status,
            jobId: job.jobId,
            code: "INVALID_STATE",
          });
        const keys = f.output.effects.map((_, i) => effectKey(job.jobId, i));
        if (!recording) {
          if (f.status === "other")
            return conflict(job.jobId, "was finished before with another summary");
          return toolResult(
            { status: f.status === "first" ? "finished" : "duplicate", jobId: job.jobId, keys },
            `${f.status === "first" ? "finished" : "duplicate (finished before)"}: the executor records these ${keys.length} effect(s) as your output when you exit with code 0`,
          );
        }
        if (f.recorded) {
          // Recorded by an earlier finish (its effects are the journal's now): the same again is
          // a duplicate only if the journal still holds that record.
          const rec = await ctx.journal.outputs.get(job.jobId);
          if (f.status === "same" && rec?.contentHash === f.recorded.contentHash)
            return recordedAnswer(job.jobId, "duplicate", rec.output.effects.length);
          return conflict(job.jobId, "was recorded first with another output");
        }
        return await record(ctx, binding, f.output, keys);
      } catch (e) {
        // Nothing was recorded (the journal could not take it): finish may be called again.
        return failureResult(e);
      }
    },
  };
}

const conflict = (jobId: string, why: string) =>
  toolError(`conflict: job ${jobId}'s output ${why}; the first stands (first write wins)`, {
    status: "conflict",
    jobId,
    code: "OUTPUT_CONFLICT",
  });

const recordedAnswer = (jobId: string, status: "recorded" | "duplicate", effects: number) =>
  toolResult(
    { status, jobId, keys: Array.from({ length: effects }, (_, i) => effectKey(jobId, i)) },
    status === "recorded"
      ? `recorded: idem applies each of the ${effects} effect(s) once`
      : "duplicate: this output was recorded before; nothing written",
  );

/** Records the draft's output through core; the draft then keeps only the record's hash. */
async function record(
  ctx: McpContext,
  binding: JobBinding,
  output: DraftOutput,
  keys: string[],
): Promise<CallToolResult> {
  const { job, draft } = binding;
  const r = await recordOutput({
    journal: ctx.journal,
    config: ctx.config,
    kinds: ctx.kinds,
    output,
    source: "mcp",
    actor: ctx.actor,
    grant: ctx.grant,
  });
  if (r.status === "forbidden")
    return toolError(
      `forbidden: ${r.issues.map((i) => `${i.path || "(output)"}: ${i.message}`).join("; ")}`,
      { status: "forbidden", jobId: job.jobId, code: "FORBIDDEN", issues: r.issues },
    );
  if (r.status === "invalid")
    return toolError(
      `invalid output: ${r.issues.map((i) => `${i.path || "(output)"}: ${i.message}`).join("; ")}`,
      { status: "invalid", jobId: job.jobId, code: r.code, issues: r.issues },
    );
  if (r.status === "conflict")
    return conflict(
      job.jobId,
      "was recorded first with another output (this one is kept in the journal's rejections)",
    );
  const rec = await ctx.journal.outputs.get(job.jobId);
  if (rec) await draft.recorded(rec.contentHash);
  ctx.logger?.info({ jobId: job.jobId, status: r.status, effects: keys.length }, "mcp finish");
  return recordedAnswer(job.jobId, r.status, keys.length);
}

function jobInputTool(ctx: McpContext, binding: JobBinding | undefined): SessionTool {
  return {
    definition: {
      name: "job_input",
      title: "The job's input",
      description: "This job's ID, its agent and its input: what the job asks of you.",
      inputSchema: inputSchemaOf(NoArguments),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async call() {
      if (!binding) return toolError(NO_JOB, { code: "INVALID_STATE" });
      const { job } = binding;
      if (job.input !== undefined)
        return toolResult({ jobId: job.jobId, agent: job.agent, input: job.input });
      try {
        const row = await ctx.journal.jobs.get(job.jobId);
        if (!row)
          return toolResult(
            { jobId: job.jobId, agent: job.agent, input: null },
            `job ${job.jobId} was not enqueued through idem's journal, so idem has no input for it: the task is what you were asked`,
          );
        return toolResult({ jobId: row.jobId, agent: row.agent, input: row.input });
      } catch (e) {
        return failureResult(e);
      }
    },
  };
}

function jobOutputTool(ctx: McpContext, binding: JobBinding | undefined): SessionTool {
  return {
    definition: {
      name: "job_output",
      title: "The job's output and its effects",
      description:
        "This job's recorded output with each effect's state in idem's ledger (as idem show --json: runs, effects, events, rejections, approvals: a run in state awaiting waits for a person's approval), or null while none is recorded; and the draft staged in this session.",
      inputSchema: inputSchemaOf(NoArguments),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async call() {
      if (!binding) return toolError(NO_JOB, { code: "INVALID_STATE" });
      const { job, draft } = binding;
      try {
        const staged = await draft.view();
        try {
          return toolResult({ recorded: await showJob(ctx.journal, job.jobId), draft: staged });
        } catch (e) {
          if (!isIdemError(e, "NOT_FOUND")) throw e;
          return toolResult(
            { recorded: null, draft: staged },
            `no output recorded for job ${job.jobId} yet; ${staged.effects.length} effect(s) staged in its draft (attempt ${staged.attempt})`,
          );
        }
      } catch (e) {
        return failureResult(e);
      }
    },
  };
}

function statusTool(ctx: McpContext): SessionTool {
  return {
    definition: {
      name: "journal_status",
      title: "The journal's status",
      description:
        "Counts of idem's journal (as idem status --json): outputs, runs and effects by state, rejections, dead letters, jobs by state.",
      inputSchema: inputSchemaOf(NoArguments),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async call() {
      try {
        return toolResult(await readStatus(ctx.journal));
      } catch (e) {
        return failureResult(e);
      }
    },
  };
}
