import type { z } from "zod";
import { checkJsonShape } from "./check-json-shape.js";
import type { Config } from "./config.js";
import { issuePath } from "./config.js";
import type { AgentOutput, Job, Validated, ValidationIssue } from "./records.js";
import { AgentOutputSchema, JobSchema } from "./records.js";

function zodIssues(error: z.ZodError, prefix: (string | number)[] = []): ValidationIssue[] {
  return error.issues.map((i) => ({ path: issuePath([...prefix, ...i.path]), message: i.message }));
}

/**
 * Validates a Job as sent by a client: first its raw JSON shape (`checkJsonShape`), then JobSchema.
 *
 * Never throws: every problem comes back as an issue with its field path, and nothing is written.
 * Whether the job ID is already enqueued (duplicate or JOB_CONFLICT) is the journal's question.
 */
export function validateJob(raw: unknown): Validated<Job> {
  const shape = checkJsonShape(raw);
  if (shape.length > 0) return { ok: false, issues: shape };
  const r = JobSchema.safeParse(raw);
  return r.success ? { ok: true, value: r.data } : { ok: false, issues: zodIssues(r.error) };
}

/**
 * Validates an AgentOutput's envelope against its schema and the config's limits: its raw JSON
 * shape, `{ jobId, agent, summary?, effects, meta? }` with each effect an object naming its kind,
 * and `limits.maxEffects`. Each effect is then checked by its kind (the kind registry of
 * @idem/effects: `checkEffects`, which @idem/core's `checkRecordable` runs after this).
 *
 * Never throws: every issue comes back with its field path (an invalid submission writes nothing).
 * Pure and deterministic, so the executor, the HTTP API and `idem submit` refuse the same outputs.
 * `limits.maxOutputBytes` is the caller's check on the canonical JSON.
 */
export function validateOutput(raw: unknown, config: Config): Validated<AgentOutput> {
  const shape = checkJsonShape(raw);
  if (shape.length > 0) return { ok: false, issues: shape };
  const r = AgentOutputSchema.safeParse(raw);
  if (!r.success) return { ok: false, issues: zodIssues(r.error) };
  const out = r.data;
  if (out.effects.length > config.limits.maxEffects) {
    return {
      ok: false,
      issues: [
        {
          path: "effects",
          message: `has ${out.effects.length} effects; limits.maxEffects is ${config.limits.maxEffects}`,
        },
      ],
    };
  }
  return { ok: true, value: out };
}
