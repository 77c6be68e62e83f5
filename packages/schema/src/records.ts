import { z } from "zod";
import { AGENT_PATTERN, JOB_ID_PATTERN } from "./ids.js";

/** A job ID: JOB_ID_PATTERN, so it is safe in a NATS message ID, a path segment and a ref. */
export const JobIdSchema = z
  .string()
  .regex(
    JOB_ID_PATTERN,
    "must start with a letter or digit and hold only A-Z a-z 0-9 . _ : - (128 at most)",
  );
/** An agent name: AGENT_PATTERN, since it becomes a NATS subject token. */
export const AgentNameSchema = z
  .string()
  .regex(AGENT_PATTERN, "must start with a-z or 0-9 and hold only a-z 0-9 _ - (64 at most)");

/**
 * Any JSON value (null, boolean, number, string, array, object).
 *
 * One instance for every such field, so the JSON Schemas name it once (`$defs.JsonValue`).
 */
export const JsonValueSchema = z.json();

/**
 * A unit of work for an agent, keyed by job ID: `{ jobId, agent, input, createdAt? }`.
 *
 * Enqueueing the same job ID again with the same input is a duplicate, with a different input a
 * conflict (JOB_CONFLICT); `validateJob` runs this schema after `checkJsonShape`.
 */
export const JobSchema = z.strictObject({
  jobId: JobIdSchema,
  agent: AgentNameSchema,
  input: JsonValueSchema,
  createdAt: z.iso.datetime({ offset: true }).optional(),
});
/** A parsed Job. */
export type Job = z.infer<typeof JobSchema>;

/**
 * One effect an agent asks for: an object naming its `kind`; the rest is the kind's own, checked
 * by the kind's schema and checks (the kind registry of @idem/effects: idem's built-in kinds and
 * the config's `kinds`) before the output is recorded. Targets are named by alias, never by path,
 * URL or raw subject.
 */
export const EffectSpecSchema = z.looseObject({
  kind: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$/, "is not an effect kind name"),
});
/** An effect as recorded: its kind, and whatever its kind's schema took. */
export type EffectSpec = z.infer<typeof EffectSpecSchema>;

/**
 * What an agent sends back for one job: `{ jobId, agent, summary?, effects, meta? }`.
 *
 * `effects` may be empty.
 *
 * Recorded once per job ID: the same content hash again is a duplicate, a different one a conflict
 * (OUTPUT_CONFLICT, kept in the rejections). The schema alone does not know the config; use
 * `validateOutput`, which also runs `checkJsonShape` and checks the limits; each effect is checked
 * by its kind (@idem/effects' `checkEffects`).
 */
export const AgentOutputSchema = z.strictObject({
  jobId: JobIdSchema,
  agent: AgentNameSchema,
  summary: z.string().max(65_536).optional(),
  effects: z.array(EffectSpecSchema),
  meta: z.record(z.string(), JsonValueSchema).optional(),
});
/** A parsed AgentOutput. */
export type AgentOutput = z.infer<typeof AgentOutputSchema>;

/** One problem with a submission, named by its field path (`effects.0.repo`). */
export interface ValidationIssue {
  /** The field path, dot-separated; empty for the whole value. */
  path: string;
  /** What is wrong, fit for the person or agent who sent it. */
  message: string;
}
/** A validation's answer: the parsed value, or every issue found (never an exception). */
export type Validated<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };
