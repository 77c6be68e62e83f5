import type { JournalStore, OutputSource } from "@idem/journal";
import { noopTracing, type Tracing } from "@idem/runtime";
import type { Config, ValidationIssue } from "@idem/schema";
import { parseStrictJson } from "@idem/schema";
import type { AgentGrant } from "../access/agent-grant.js";
import { type RecordMetrics, recordOutput } from "../record/record-output.js";

/** The counters a front end may pass to `submitOutput` (see `RecordMetrics`). */
export type SubmitMetrics = RecordMetrics;

/**
 * The submit answer (docs/agents.md), shared by HTTP, NATS request/reply and `idem submit`. `recorded` and
 * `duplicate` are successes; `conflict`, `invalid` and `forbidden` (an agent's credential may not
 * record it) are refusals (nothing of them is an output).
 */
export interface SubmitResult {
  status: "recorded" | "duplicate" | "conflict" | "invalid" | "forbidden";
  jobId: string | null;
  issues?: ValidationIssue[];
}

/** The trace context of one submission (the `traceparent` header of HTTP or NATS). */
export interface SubmitTrace {
  /** The caller's W3C traceparent; an invalid one is ignored (the submission is not). */
  traceparent?: string | null | undefined;
  /** This process's tracing, for the `idem.submit` span; default none (the context passes through). */
  tracing?: Tracing;
}

/** The HTTP status of each submit answer (docs/agents.md): 201, 200, 409, 400, 403. */
export const SUBMIT_HTTP_STATUS = {
  recorded: 201,
  duplicate: 200,
  conflict: 409,
  invalid: 400,
  forbidden: 403,
} as const;

/** One submission: the raw value received, where from, and what to count and trace. */
export interface SubmitOutputRequest {
  journal: JournalStore;
  config: Config;
  /** The submitted value, as parsed from the body (anything: it is checked before record). */
  raw: unknown;
  source: OutputSource;
  /** The agent credential it came with; absent: the operator's (see `recordOutput`). */
  grant?: AgentGrant | undefined;
  /** Who records it, for the journal's events; default the journal's. */
  actor?: string | undefined;
  metrics?: SubmitMetrics | undefined;
  trace?: SubmitTrace;
}

/**
 * Validates and records an AgentOutput submitted from elsewhere, through `recordOutput`. First
 * write wins: the same content again is `duplicate` (success), other content for a recorded job
 * is `conflict` (kept in `rejections` by the journal), an invalid submission (see
 * `checkOutput`: the schema, the config, every check of the effects' text, the size) writes
 * nothing. Safe to repeat: a retry after a lost answer is a duplicate.
 *
 * With `trace`, the submission is an `idem.submit` span continuing the caller's traceparent, and
 * the record keeps that span's context (or, tracing off, the caller's) for the interpreter to
 * continue. It is no part of the output: a retry under another traceparent is still `duplicate`,
 * and the record keeps the first.
 * @throws whatever the journal throws (`DISK_FULL`, `IO`, a failed fsync); nothing is
 * recorded then.
 */
export async function submitOutput(request: SubmitOutputRequest): Promise<SubmitResult> {
  const { journal, config, raw, source, metrics } = request;
  const trace = request.trace ?? {};
  const tracing = trace.tracing ?? noopTracing;
  return tracing.inSpan(
    "idem.submit",
    { parent: trace.traceparent, kind: "server", attributes: { "idem.submit.source": source } },
    async (span) => {
      const r = await recordOutput({
        journal,
        config,
        output: raw,
        source,
        metrics,
        grant: request.grant,
        ...(request.actor === undefined ? {} : { actor: request.actor }),
        traceparent: span.traceparent,
      });
      const result: SubmitResult =
        r.status === "invalid" || r.status === "forbidden"
          ? { status: r.status, jobId: r.jobId, issues: r.issues }
          : { status: r.status, jobId: r.jobId };
      span.setAttributes({
        "idem.job_id": result.jobId ?? undefined,
        "idem.submit.status": result.status,
      });
      return result;
    },
  );
}

/**
 * Parses a submission body (its bytes, or text): one over `maxOutputBytes`, not UTF-8, not JSON,
 * or JSON that parsing would change (a key twice, an integer beyond 2^53; see `parseStrictJson`)
 * is an `invalid` answer naming why (with the line and column of a syntax error). Pure: reads and
 * writes nothing, never throws.
 */
export function parseSubmission(
  text: string | Uint8Array,
  maxOutputBytes?: number,
): { ok: true; value: unknown } | { ok: false; result: SubmitResult } {
  if (maxOutputBytes !== undefined) {
    const size = Buffer.byteLength(text, "utf8");
    if (size > maxOutputBytes) {
      return { ok: false, result: oversizedSubmission("the output", size, maxOutputBytes) };
    }
  }
  const r = parseStrictJson(text);
  return r.ok ? r : { ok: false, result: { status: "invalid", jobId: null, issues: r.issues } };
}

/**
 * The `invalid` answer to a submission of `size` bytes over `limits.maxOutputBytes`, naming `what`
 * (a file name, or "the output"): a front end that can see the size first (a file) answers this
 * without reading it. Pure.
 */
export function oversizedSubmission(
  what: string,
  size: number,
  maxOutputBytes: number,
): SubmitResult {
  return {
    status: "invalid",
    jobId: null,
    issues: [
      { path: "", message: `${what} is ${size} bytes; limits.maxOutputBytes is ${maxOutputBytes}` },
    ],
  };
}
