import { readStatus, recordOutput, showJob } from "@idem/core";
import { isIdemError } from "@idem/schema";
import { z } from "zod";
import type { JobDraft } from "./job-draft.js";
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
        ? "Records this job's output (the staged effects, in order, and the summary) in idem's journal; from then on idem applies each effect once. First write wins: calling it again with the same output answers duplicate; another output for a recorded job is refused as a conflict. Nothing can be staged after it."
        : "Ends this job's output (the staged effects, in order, and the summary): the idem executor records it when you exit with code 0, and idem then applies each effect once. If you fail or are killed before exiting 0, nothing is recorded and the job runs again. Nothing can be staged after it.",
      inputSchema: inputSchemaOf(FinishArguments),
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
    },
    async call(args) {
      if (!binding) return toolError(NO_JOB, { code: "INVALID_STATE" });
      const parsed = parseArguments(FinishArguments, args);
      if (!parsed.ok) return parsed.result;
      const { draft, job } = binding;
      const f = draft.finish(parsed.value.summary);
      const keys = draft.keys();
      if (!recording) {
        if (f.status === "other")
          return toolError(
            `conflict: job ${job.jobId}'s output was finished before with another summary; the first stands`,
            { status: "conflict", jobId: job.jobId, code: "OUTPUT_CONFLICT" },
          );
        return toolResult(
          { status: f.status === "first" ? "finished" : "duplicate", jobId: job.jobId, keys },
          `${f.status === "first" ? "finished" : "duplicate (finished before)"}: the executor records these ${keys.length} effect(s) as your output when you exit with code 0`,
        );
      }
      try {
        const r = await recordOutput({
          journal: ctx.journal,
          config: ctx.config,
          kinds: ctx.kinds,
          output: f.output,
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
          return toolError(
            `conflict: another output was recorded first for job ${job.jobId} (this one is kept in the journal's rejections); the first stands`,
            { status: "conflict", jobId: job.jobId, code: "OUTPUT_CONFLICT" },
          );
        ctx.logger?.info(
          { jobId: job.jobId, status: r.status, effects: keys.length },
          "mcp finish",
        );
        return toolResult(
          { status: r.status, jobId: job.jobId, keys },
          r.status === "recorded"
            ? `recorded: idem applies each of the ${keys.length} effect(s) once`
            : "duplicate: this output was recorded before; nothing written",
        );
      } catch (e) {
        // Nothing was recorded (the journal could not take it): finish may be called again.
        return failureResult(e);
      }
    },
  };
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
          return toolError(
            `NOT_FOUND: the journal has no job ${job.jobId} (it was not enqueued through this journal): its input is with whoever asked for it`,
            { code: "NOT_FOUND" },
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
        "This job's recorded output with each effect's state in idem's ledger (as idem show --json: runs, effects, events, rejections), or null while none is recorded; and the draft staged in this session.",
      inputSchema: inputSchemaOf(NoArguments),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async call() {
      if (!binding) return toolError(NO_JOB, { code: "INVALID_STATE" });
      const { job, draft } = binding;
      const staged = {
        effects: draft.output().effects,
        keys: draft.keys(),
        finished: draft.isFinished,
      };
      try {
        return toolResult({ recorded: await showJob(ctx.journal, job.jobId), draft: staged });
      } catch (e) {
        if (!isIdemError(e, "NOT_FOUND")) return failureResult(e);
        return toolResult(
          { recorded: null, draft: staged },
          `no output recorded for job ${job.jobId} yet; ${draft.size} effect(s) staged here`,
        );
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
