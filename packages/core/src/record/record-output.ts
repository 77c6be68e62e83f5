import { BUILT_IN_KINDS, effectTargetsOf, type KindRegistry, kindRegistryOf } from "@idem/effects";
import type { JournalStore, OutputSource } from "@idem/journal";
import {
  type AgentOutput,
  type Config,
  canonicalJson,
  retryAfter,
  type ValidationIssue,
} from "@idem/schema";
import { type AgentGrant, scopeIssues } from "../access/agent-grant.js";
import { checkRecordable } from "../validate/check-recordable.js";

/** A counter as recording uses it (prom-client's Counter fits). */
export interface RecordCounter {
  inc(labels: Record<string, string>): void;
}

/**
 * The counters a front end may pass: invalid outputs, records by status, conflicts, and outputs an
 * agent's credential was refused; by source.
 */
export interface RecordMetrics {
  invalid: RecordCounter;
  records: RecordCounter;
  conflicts: RecordCounter;
  forbidden?: RecordCounter;
}

/**
 * How a caller that must not lose the output (the executor, which has not acked its delivery)
 * retries a record the journal could not take: `retryable` decides per error, `onRetry` is told
 * each wait. Without it, the journal's error propagates at once.
 */
export interface RecordRetry {
  retryable(error: unknown): boolean;
  onRetry?(error: unknown, delayMs: number): void;
  /** The longest wait between two attempts (default 1 s). */
  maxMs?: number;
}

/** One output to record and where it comes from. */
export interface RecordOutputRequest {
  journal: JournalStore;
  config: Config;
  /** The effect kinds (`loadKinds`); default idem's own. */
  kinds?: KindRegistry | undefined;
  /** The output as received (any value, checked here before anything is written), or checkOutput's answer. */
  output: unknown;
  source: OutputSource;
  /** Who records it (the executor's owner ID); default the journal's. */
  actor?: string;
  /**
   * The agent of the job as the caller holds it (the executor's claimed job); without it the
   * journal's job row is read. An output whose `agent` is not its job's is refused.
   */
  jobAgent?: string | undefined;
  /**
   * The agent credential it comes with (an agent's token, an agent's NATS subject); absent: the
   * operator's, with every right. See {@link recordOutput}.
   */
  grant?: AgentGrant | undefined;
  /** The W3C trace context to keep with the record, for the interpreter's spans. */
  traceparent?: string | undefined;
  metrics?: RecordMetrics | undefined;
  retry?: RecordRetry;
}

/**
 * What a record answered. `recorded` and `duplicate` are successes (the output, or the same content,
 * is durable); `conflict`: another output was recorded first for this job (this one is kept in
 * rejections); `invalid`: refused before anything was written, every issue named by its field
 * path, with the code a caller that fails on it uses (OUTPUT_TOO_LARGE or INVALID_INPUT).
 */
export type RecordOutcome =
  | {
      status: "recorded" | "duplicate" | "conflict";
      jobId: string;
      output: AgentOutput;
      /** For a conflict: the content hash of the output recorded first. */
      existingHash?: string | undefined;
    }
  | InvalidOutput
  | ForbiddenOutput;

/**
 * An output the caller's agent credential may not record (nothing written): another agent's name,
 * a job not enqueued for that agent, an effect outside its scope; each issue names the field.
 */
export interface ForbiddenOutput {
  status: "forbidden";
  jobId: string;
  issues: ValidationIssue[];
}

/** An output that passed {@link checkOutput}: what {@link recordOutput} writes without checking again. */
export interface CheckedOutput {
  readonly output: AgentOutput;
  /** Its canonical JSON (RFC 8785), what the journal stores and hashes. */
  readonly canonical: string;
}

/** The outputs this process checked: `recordOutput` takes one of them as it is. */
const checked = new WeakSet<CheckedOutput>();

/** An output refused before record; `code` is what a caller that fails on it throws. */
export interface InvalidOutput {
  status: "invalid";
  jobId: string | null;
  code: "INVALID_INPUT" | "OUTPUT_TOO_LARGE";
  issues: ValidationIssue[];
}

/**
 * The checks before an output may be recorded: {@link checkRecordable} (the schema, the config,
 * every check of the effects' text), then the size of its canonical JSON against
 * `limits.maxOutputBytes`. Pure: no I/O, never throws. A caller that must tell an invalid output
 * from a failed record (the executor fails the agent's run on the first) checks first and hands
 * the result to {@link recordOutput}.
 */
export function checkOutput(
  raw: unknown,
  config: Config,
  kinds: KindRegistry = kindRegistryOf(config, BUILT_IN_KINDS),
): CheckedOutput | InvalidOutput {
  const rawJobId =
    typeof raw === "object" &&
    raw !== null &&
    typeof (raw as { jobId?: unknown }).jobId === "string"
      ? (raw as { jobId: string }).jobId
      : null;
  const v = checkRecordable(raw, config, kinds);
  if (!v.ok) return { status: "invalid", jobId: rawJobId, code: "INVALID_INPUT", issues: v.issues };
  const canonical = canonicalJson(v.value);
  const size = Buffer.byteLength(canonical, "utf8");
  if (size > config.limits.maxOutputBytes) {
    return {
      status: "invalid",
      jobId: rawJobId,
      code: "OUTPUT_TOO_LARGE",
      issues: [
        {
          path: "",
          message: `the output is ${size} bytes; limits.maxOutputBytes is ${config.limits.maxOutputBytes}`,
        },
      ],
    };
  }
  const ok: CheckedOutput = { output: v.value, canonical };
  checked.add(ok);
  return ok;
}

/** Whether a value is the answer of {@link checkOutput} for an output that passed. */
export function isCheckedOutput(value: unknown): value is CheckedOutput {
  return typeof value === "object" && value !== null && checked.has(value as CheckedOutput);
}

/**
 * The one path by which an output becomes a record, for every front end (HTTP and NATS submit,
 * `idem submit`, the executor after an agent run, the MCP server): {@link checkOutput} (unless
 * `output` is already its answer), then the job's agent (an output for a job the journal knows is
 * refused as `invalid`, at `agent`, unless its `agent` is the job's: one agent never answers
 * another's job), the ordering targets of its effects, then `journal.outputs.record`. With an
 * agent's `grant`, the output must also be in that agent's name, for a job the journal knows as
 * that agent's, with every effect inside its scope, else it is `forbidden` and nothing is written.
 * First write wins: the same content again is `duplicate`, other content `conflict` (kept in
 * rejections); an invalid output writes nothing. Safe to repeat: a retry after
 * a lost answer is a duplicate. Answered once the record is durable.
 * @throws whatever the journal throws (DISK_FULL, IO, UNAVAILABLE) once `retry` (if given) gives
 * up; nothing is recorded then.
 */
export async function recordOutput(request: RecordOutputRequest): Promise<RecordOutcome> {
  const { journal, config, source, metrics } = request;
  const kinds = request.kinds ?? kindRegistryOf(config, BUILT_IN_KINDS);
  const c = isCheckedOutput(request.output)
    ? request.output
    : checkOutput(request.output, config, kinds);
  if (!isCheckedOutput(c)) {
    metrics?.invalid.inc({ source });
    return c;
  }
  const { output, canonical } = c;
  const grant = request.grant;
  const outOfScope = grant ? grantIssues(output, grant, kinds) : [];
  if (outOfScope.length > 0) return forbidden(output, outOfScope, request);
  const jobAgent = request.jobAgent ?? (await journal.jobs.get(output.jobId))?.agent;
  const wrongAgent = agentIssue(output, jobAgent);
  if (wrongAgent) {
    metrics?.invalid.inc({ source });
    return { status: "invalid", jobId: output.jobId, code: "INVALID_INPUT", issues: [wrongAgent] };
  }
  if (grant && jobAgent === undefined)
    return forbidden(
      output,
      [
        {
          path: "jobId",
          message: `job ${output.jobId} is not enqueued: agent ${grant.agent}'s credential records only the jobs enqueued for it`,
        },
      ],
      request,
    );
  const options = {
    source,
    targets: effectTargetsOf(output, config, kinds),
    canonical,
    ...(request.actor === undefined ? {} : { actor: request.actor }),
    ...(request.traceparent === undefined ? {} : { traceparent: request.traceparent }),
  };
  const retry = request.retry;
  const record = () => journal.outputs.record(output, options);
  const r = retry
    ? await record().catch((e: unknown) =>
        retryAfter(e, record, {
          initialMs: 50,
          maxMs: retry.maxMs ?? 1_000,
          retryable: retry.retryable,
          ...(retry.onRetry ? { onRetry: retry.onRetry } : {}),
        }),
      )
    : await record();
  metrics?.records.inc({ source, status: r.status });
  if (r.status === "conflict") metrics?.conflicts.inc({ source });
  return {
    status: r.status,
    jobId: r.jobId,
    output,
    ...(r.status === "conflict" ? { existingHash: r.existingHash } : {}),
  };
}

/**
 * Why `output` may not answer its job: the job's agent (`jobAgent`, the journal's row) is another.
 * Undefined for a job the journal does not know, or its own agent's. Pure.
 */
export function agentIssue(
  output: Pick<AgentOutput, "jobId" | "agent">,
  jobAgent: string | undefined,
): ValidationIssue | undefined {
  if (jobAgent === undefined || jobAgent === output.agent) return undefined;
  return {
    path: "agent",
    message: `is "${output.agent}", but job ${output.jobId} is agent "${jobAgent}"'s: an output answers only its own agent's job`,
  };
}

/** What an agent's grant refuses in an output: another agent's name, then each effect outside its scope. */
function grantIssues(
  output: AgentOutput,
  grant: AgentGrant,
  kinds: KindRegistry,
): ValidationIssue[] {
  if (output.agent !== grant.agent)
    return [
      {
        path: "agent",
        message: `is "${output.agent}"; this credential is agent ${grant.agent}'s and records only as it`,
      },
    ];
  return scopeIssues(output, grant, kinds);
}

function forbidden(
  output: AgentOutput,
  issues: ValidationIssue[],
  request: RecordOutputRequest,
): ForbiddenOutput {
  (request.metrics?.forbidden ?? request.metrics?.invalid)?.inc({ source: request.source });
  return { status: "forbidden", jobId: output.jobId, issues };
}

/** The issues of an invalid output in one line: `path message; ...` (`(root)` for the whole). */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((i) => `${i.path || "(root)"} ${i.message}`).join("; ");
}
