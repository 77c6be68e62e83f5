import type { JournalStore, OutputSource } from "@idem/journal";
import type { Config, ValidationIssue } from "@idem/schema";
import { effectTargets, parseStrictJson } from "@idem/schema";
import { noopTracing, type Tracing } from "../telemetry/tracing.js";
import { checkRecordable } from "../validate/check-recordable.js";

/** A counter as far as submit uses it (prom-client's Counter fits). */
export interface SubmitCounter {
  inc(labels: Record<string, string>): void;
}

/** The counters a front end may pass to `submitOutput`: invalid answers, records by status, conflicts. */
export interface SubmitMetrics {
  invalid: SubmitCounter;
  records: SubmitCounter;
  conflicts: SubmitCounter;
}

/**
 * DESIGN.md's submit answer, shared by HTTP, NATS request/reply and `idem submit`. `recorded` and
 * `duplicate` are successes; `conflict` and `invalid` are refusals (nothing of them is an output).
 */
export interface SubmitResult {
  status: "recorded" | "duplicate" | "conflict" | "invalid";
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

/** The HTTP status of each submit answer (DESIGN.md): 201, 200, 409, 400. */
export const SUBMIT_HTTP_STATUS = {
  recorded: 201,
  duplicate: 200,
  conflict: 409,
  invalid: 400,
} as const;

/**
 * Validates and records an AgentOutput submitted from elsewhere. First write wins: the same
 * content again is `duplicate` (success), other content for a recorded job is `conflict` (kept in
 * `rejections` by the journal), an invalid submission (see {@link checkRecordable}: the schema, the
 * config and every check of the effects' text, a git.patch parsed) writes nothing. Safe to repeat:
 * a retry after a lost answer is a duplicate.
 *
 * With `trace`, the submission is an `idem.submit` span continuing the caller's traceparent, and
 * the record keeps that span's context (or, tracing off, the caller's) for the interpreter to
 * continue. It is no part of the output: a retry under another traceparent is still `duplicate`,
 * and the record keeps the first.
 * @throws whatever the journal throws (`DISK_FULL`, `IO`, a failed fsync); nothing is
 * recorded then.
 */
export async function submitOutput(
  journal: JournalStore,
  config: Config,
  raw: unknown,
  source: OutputSource,
  metrics?: SubmitMetrics,
  trace: SubmitTrace = {},
): Promise<SubmitResult> {
  const tracing = trace.tracing ?? noopTracing;
  return tracing.inSpan(
    "idem.submit",
    { parent: trace.traceparent, kind: "server", attributes: { "idem.submit.source": source } },
    async (span) => {
      const result = await submitChecked(journal, config, raw, source, metrics, span.traceparent);
      span.setAttributes({
        "idem.job_id": result.jobId ?? undefined,
        "idem.submit.status": result.status,
      });
      return result;
    },
  );
}

async function submitChecked(
  journal: JournalStore,
  config: Config,
  raw: unknown,
  source: OutputSource,
  metrics: SubmitMetrics | undefined,
  traceparent: string | undefined,
): Promise<SubmitResult> {
  const rawJobId =
    typeof raw === "object" &&
    raw !== null &&
    typeof (raw as { jobId?: unknown }).jobId === "string"
      ? (raw as { jobId: string }).jobId
      : null;
  const v = checkRecordable(raw, config);
  if (!v.ok) {
    metrics?.invalid.inc({ source });
    return { status: "invalid", jobId: rawJobId, issues: v.issues };
  }
  const r = await journal.outputs.record(v.value, {
    source,
    targets: effectTargets(v.value, config),
    ...(traceparent === undefined ? {} : { traceparent }),
  });
  metrics?.records.inc({ source, status: r.status });
  if (r.status === "conflict") metrics?.conflicts.inc({ source });
  return { status: r.status, jobId: r.jobId };
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
