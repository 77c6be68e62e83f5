/**
 * The bodies the executor's HTTP API answers with, as zod schemas: the source of the response
 * schemas in `docs/openapi.json` (see `openapi.ts`). Each states exactly what the server sends
 * today; the objects are closed, so the API tests fail on a field the server sends and this file
 * does not name, as on one it names and the server leaves out.
 */
import { z } from "zod";
import { FAILURE_CLASSES } from "./errors.js";
import { AgentNameSchema, AgentOutputSchema, JobIdSchema } from "./records.js";
import { EFFECT_STATES, JOB_STATES, RUN_STATES } from "./states.js";

/** One problem with a submission, named by its field path (`ValidationIssue`). */
export const ValidationIssueSchema = z.strictObject({
  path: z
    .string()
    .describe("The field path, dot-separated (`effects.0.repo`); empty for the whole body."),
  message: z.string().describe("What is wrong, for the person or agent who sent it."),
});

const submitAnswer = <S extends "recorded" | "duplicate" | "conflict">(status: S, what: string) =>
  z
    .strictObject({ status: z.literal(status), jobId: JobIdSchema })
    .describe(`The answer to POST /v1/outputs when ${what}.`);

/** `201` of `POST /v1/outputs`: the output is recorded now. */
export const SubmitRecordedSchema = submitAnswer("recorded", "the output is recorded now");
/** `200` of `POST /v1/outputs`: the same content was recorded before; nothing written, a success. */
export const SubmitDuplicateSchema = submitAnswer(
  "duplicate",
  "the same content was recorded before for this job ID: nothing written, a success",
);
/** `409` of `POST /v1/outputs`: other content was recorded first; refused, kept in the rejections. */
export const SubmitConflictSchema = submitAnswer(
  "conflict",
  "other content was recorded first for this job ID: refused, kept in the journal's rejections",
);
/**
 * `400` of `POST /v1/outputs`: nothing written. `jobId` is the body's `jobId` when it is a string
 * (well-formed or not), else `null`.
 */
export const SubmitInvalidSchema = z
  .strictObject({
    status: z.literal("invalid"),
    jobId: z
      .string()
      .nullable()
      .describe("The body's `jobId` when it is a string (well-formed or not), else null."),
    issues: z.array(ValidationIssueSchema),
  })
  .describe(
    "The answer to POST /v1/outputs when the output is invalid: nothing written. A body that is " +
      "not JSON or is over limits.maxOutputBytes has one issue with the path ''.",
  );
/**
 * `403` of `POST /v1/outputs`: the caller's credential (an agent's token, or the NATS subject of an
 * agent) may not record this output: another agent's name, a job not enqueued for that agent, an
 * effect outside its scope. Nothing written; each issue names the field.
 */
export const SubmitForbiddenSchema = z
  .strictObject({
    status: z.literal("forbidden"),
    jobId: z
      .string()
      .nullable()
      .describe("The body's `jobId` when it is a string (well-formed or not), else null."),
    issues: z.array(ValidationIssueSchema),
  })
  .describe(
    "The answer to POST /v1/outputs when the caller's agent credential may not record this " +
      "output (another agent's name or job, an effect outside its scope): nothing written.",
  );
/** Any answer of `POST /v1/outputs` (and of the NATS submit subject but its `error` answer). */
export const SubmitAnswerSchema = z.discriminatedUnion("status", [
  SubmitRecordedSchema,
  SubmitDuplicateSchema,
  SubmitConflictSchema,
  SubmitInvalidSchema,
  SubmitForbiddenSchema,
]);
/** A parsed submit answer. */
export type SubmitAnswer = z.infer<typeof SubmitAnswerSchema>;

const enqueueFields = {
  jobId: JobIdSchema,
  stream: z
    .string()
    .min(1)
    .describe("The JetStream stream, or `embedded` on the journal's own queue."),
  seq: z.number().int().positive().describe("The job's sequence in that stream or queue."),
};
/** The answer of `POST /v1/jobs` and of `idem enqueue --json`: `{ jobId, stream, seq, duplicate }`. */
export const EnqueueAnswerSchema = z.strictObject({ ...enqueueFields, duplicate: z.boolean() });
/** A parsed enqueue answer. */
export type EnqueueAnswer = z.infer<typeof EnqueueAnswerSchema>;
/** `201` of `POST /v1/jobs`: enqueued now. */
export const JobEnqueuedSchema = z
  .strictObject({ ...enqueueFields, duplicate: z.literal(false) })
  .describe("The answer to POST /v1/jobs when the job is enqueued now.");
/** `200` of `POST /v1/jobs`: the same job was enqueued before; safe to repeat. */
export const JobAlreadyEnqueuedSchema = z
  .strictObject({ ...enqueueFields, duplicate: z.literal(true) })
  .describe("The answer to POST /v1/jobs when the same job was enqueued before: a success.");

/** `400` of `POST /v1/jobs`: an invalid job (each problem names its field), or a batch. */
export const JobProblemsSchema = z
  .strictObject({
    error: z.string(),
    problems: z
      .array(z.string())
      .optional()
      .describe(
        "Each problem, naming its field (`jobId: ...`, `agent: ... unknown-agent ...`); " +
          "absent when the body is a batch.",
      ),
  })
  .describe("The answer to POST /v1/jobs when the job is refused: nothing enqueued.");

/** A refusal or a missing resource: `{ error }` (400, 401, 404, 409, 413, 501). */
export const ErrorBodySchema = z
  .strictObject({ error: z.string().describe("What went wrong, for a person.") })
  .describe("A refusal: what went wrong, in one sentence.");

/** `503` of a route whose journal read or write failed: nothing half-recorded; send it again. */
export const ServiceUnavailableSchema = z
  .strictObject({
    error: z.string().describe("`<code>: <message>` of the failure."),
    class: z.enum(FAILURE_CLASSES).describe("The failure class (docs/concepts.md)."),
  })
  .describe(
    "The journal (or the stream) failed: nothing is half-recorded; the request may be sent again.",
  );

/** The recorded output of one job: the answer of `GET /v1/outputs/:jobId` (`OutputRecord`). */
export const OutputRecordSchema = z
  .strictObject({
    seq: z.number().int().positive().describe("The recording order."),
    jobId: JobIdSchema,
    agent: AgentNameSchema,
    contentHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe("The sha256 (hex) of the output's canonical JSON (RFC 8785)."),
    output: AgentOutputSchema,
    source: z
      .string()
      .min(1)
      .describe(
        "Who recorded it: `executor` (a command or in-process agent), `http`, `nats` or `cli` " +
          "(`idem submit`).",
      ),
    recordedAt: z.number().int().nonnegative().describe("Milliseconds since the Unix epoch."),
    traceparent: z
      .string()
      .optional()
      .describe(
        "The W3C trace context the output was recorded under, when it had one; read-only, not " +
          "part of its content (docs/telemetry.md).",
      ),
  })
  .describe("A recorded output: immutable once written (first write wins).");

const count = z.number().int().nonnegative();
const counts = <K extends string>(keys: readonly K[]) =>
  z.strictObject(Object.fromEntries(keys.map((k) => [k, count])) as Record<K, typeof count>);

/** The journal's counts: the answer of `GET /v1/status` and of `idem status --json`. */
export const StatusReportSchema = z
  .strictObject({
    outputs: count,
    rejections: count,
    rejectedBodies: z
      .strictObject({ perJob: count, dropped: count })
      .describe(
        "The conflicting bodies kept per job at most, and how many were not kept over it (their rejections keep the hash, source and time only).",
      ),
    deadLetters: count.describe("Open (unresolved) dead letters."),
    runs: counts(RUN_STATES).describe("Each output's latest run, by state."),
    effects: counts(EFFECT_STATES).describe("The effects ledger, by state."),
    jobs: counts(JOB_STATES).describe(
      "The embedded queue's jobs, or the outbox of jobs enqueued to JetStream, by state.",
    ),
    jobsWaiting: count.describe(
      "Of the queued jobs, those waiting for a retry after a failed delivery (due later); `idem jobs` calls them waiting.",
    ),
  })
  .describe("The journal's counts.");
/** A parsed status report. */
export type StatusReport = z.infer<typeof StatusReportSchema>;

/** `200` of `GET /healthz`. */
export const HealthySchema = z.strictObject({ ok: z.literal(true) });
/** `503` of `GET /healthz`: the journal can no longer make a write durable; the process exits. */
export const UnhealthySchema = z.strictObject({
  ok: z.literal(false),
  error: z.string().describe("Why the journal failed for good."),
});
