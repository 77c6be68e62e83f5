import { redactUrl } from "./redact-url.js";

/**
 * The failure classes of docs/concepts.md ("Failure classes"), one enum everywhere.
 *
 * `transient` (I/O, lock, timeout, unavailable), `infrastructure` (crash, lost lease, out of disk),
 * `validation` (the output or spec is impossible), `conflict` (the target moved), `uncertain` (the
 * outcome is unknown: a human decides), `logic` (anything else), and `unknown-agent` (a job for an
 * agent that no `agents.<name>` of the executor that took it names: dead-lettered at once), and
 * `integrity` (what the journal holds is damaged: a recorded output that cannot be read, or does
 * not match its shape; never interpreted), and `rejected` (a person rejected an effect that needed
 * an approval, or the approval expired, docs/approvals.md). Only `transient` and `infrastructure` are retried.
 */
export const FAILURE_CLASSES = [
  "transient",
  "infrastructure",
  "validation",
  "conflict",
  "uncertain",
  "logic",
  "unknown-agent",
  "integrity",
  "rejected",
] as const;
/** One of FAILURE_CLASSES. */
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/**
 * Whether a failure class is retried.
 *
 * A run or delivery failing with `transient` or `infrastructure` is tried again after a backoff;
 * every other class ends the attempt for good (dead run, dead letter or a human decision). Pure.
 */
export function isRetryableClass(c: FailureClass): boolean {
  return c === "transient" || c === "infrastructure";
}

/**
 * The exit codes of the CLI (docs/cli.md, "Exit codes"): 0 done, 1 failed or refused, 2 a usage
 * error or an invalid config, 3 an invariant or integrity violation.
 */
export const EXIT_CODES = { OK: 0, FAILED: 1, USAGE: 2, INVARIANT: 3 } as const;
/** One of EXIT_CODES. */
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

const { FAILED, USAGE, INVARIANT } = EXIT_CODES;

/**
 * The one table of error codes: each code with its failure class (from which retryability
 * follows), the HTTP status every HTTP front end answers it with (the executor's API, the console)
 * and the exit code of the CLI. docs/agents.md ("Error codes") prints it.
 *
 * The statuses say whose fault it is and what to do: 400 and 413 the request's (send another), 403
 * the caller's credential (it may not do that: its scope, or another agent's job),
 * 404 nothing there, 409 the state it met (a conflict, a lease lost, a state that does not allow
 * it), 502 what stands behind the server (an agent, an http target), 503 the server cannot serve
 * now and nothing was half-done: every failure of the journal (locked, I/O, a full disk, a damaged
 * file, a server unavailable), as `/healthz` answers a journal failed for good; 500 a rule of the
 * server itself broken (its config, an invariant). An error without a code answers 503 and exits 1
 * (`UNCODED_ERROR`).
 *
 * A new code is added here and nowhere else; tests assert on codes, never on message text.
 */
export const ERROR_CODES = {
  INVALID_INPUT: { class: "validation", http: 400, exit: FAILED },
  FORBIDDEN: { class: "validation", http: 403, exit: FAILED },
  INVALID_CONFIG: { class: "validation", http: 500, exit: USAGE },
  UNKNOWN_ALIAS: { class: "validation", http: 400, exit: FAILED },
  OUTPUT_TOO_LARGE: { class: "validation", http: 413, exit: FAILED },
  SANDBOX_VIOLATION: { class: "validation", http: 400, exit: FAILED },
  OUTPUT_CONFLICT: { class: "conflict", http: 409, exit: FAILED },
  JOB_CONFLICT: { class: "conflict", http: 409, exit: FAILED },
  TARGET_CONFLICT: { class: "conflict", http: 409, exit: FAILED },
  TARGET_MOVED: { class: "transient", http: 409, exit: FAILED },
  ORDER_BLOCKED: { class: "transient", http: 409, exit: FAILED },
  TARGET_MISSING: { class: "infrastructure", http: 503, exit: FAILED },
  DIRTY_WORKTREE: { class: "conflict", http: 409, exit: FAILED },
  LOCKED: { class: "transient", http: 503, exit: FAILED },
  TIMEOUT: { class: "transient", http: 503, exit: FAILED },
  UNAVAILABLE: { class: "transient", http: 503, exit: FAILED },
  IO: { class: "transient", http: 503, exit: FAILED },
  DISK_FULL: { class: "infrastructure", http: 503, exit: FAILED },
  LEASE_LOST: { class: "infrastructure", http: 409, exit: FAILED },
  NOT_FOUND: { class: "logic", http: 404, exit: FAILED },
  INVALID_STATE: { class: "logic", http: 409, exit: FAILED },
  OUTCOME_UNKNOWN: { class: "uncertain", http: 502, exit: FAILED },
  INVARIANT_VIOLATION: { class: "logic", http: 500, exit: INVARIANT },
  AGENT_FAILED: { class: "transient", http: 502, exit: FAILED },
  INTEGRITY: { class: "integrity", http: 503, exit: INVARIANT },
  UNKNOWN_AGENT: { class: "unknown-agent", http: 400, exit: FAILED },
} as const satisfies Record<
  string,
  { class: FailureClass; http: 400 | 403 | 404 | 409 | 413 | 500 | 502 | 503; exit: ExitCode }
>;
/** The HTTP status and exit code of an error without a code: the server could not answer. */
export const UNCODED_ERROR = { http: 503, exit: FAILED } as const;

/** A key of ERROR_CODES. */
export type ErrorCode = keyof typeof ERROR_CODES;
/** An HTTP status of ERROR_CODES (or of UNCODED_ERROR). */
export type ErrorHttpStatus = (typeof ERROR_CODES)[ErrorCode]["http"];

/**
 * The HTTP status a front end answers a failure with: its code's in ERROR_CODES when it is an
 * IdemError (one whose code this copy of the package does not know counts as uncoded), else
 * UNCODED_ERROR's (503). Pure; never throws.
 */
export function httpStatusOfError(e: unknown): ErrorHttpStatus {
  return rowOf(e)?.http ?? UNCODED_ERROR.http;
}

/**
 * The CLI's exit code for a failure: its code's in ERROR_CODES when it is an IdemError, else
 * UNCODED_ERROR's (1). Pure; never throws.
 */
export function exitCodeOfError(e: unknown): ExitCode {
  return rowOf(e)?.exit ?? UNCODED_ERROR.exit;
}

/** The row of an IdemError's code; none for another value or a code this copy does not know. */
function rowOf(e: unknown): (typeof ERROR_CODES)[ErrorCode] | undefined {
  if (!isIdemError(e) || !Object.hasOwn(ERROR_CODES, e.code)) return undefined;
  return ERROR_CODES[e.code];
}

/** What an IdemError carries besides its code and message. */
export interface IdemErrorOptions {
  /** The error this one wraps (a third-party error caught at an adapter's boundary). */
  cause?: unknown;
  /** Structured facts for logs and `--json` output (IDs, paths, counts), never secrets. */
  details?: Record<string, unknown>;
  /** Overrides the code's default class (e.g. an I/O error known to be permanent). */
  class?: FailureClass;
}

/**
 * The one error class of idem: a code, a failure class and a retry decision.
 *
 * Its class is the code's unless the thrower overrides it; `retryable` follows from the class.
 * Identify it with `isIdemError(e, code)`, not `instanceof`, so two copies of this package agree.
 */
export class IdemError extends Error {
  override readonly name = "IdemError";
  /** What went wrong, from the one table: what callers branch on and the CLI maps to exit codes. */
  readonly code: ErrorCode;
  /** The failure class: the code's, unless the thrower knew better (IdemErrorOptions.class). */
  readonly class: FailureClass;
  /** Structured facts about the failure, if any. */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: IdemErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.class = options.class ?? ERROR_CODES[code].class;
    this.details = options.details;
  }

  /** Whether the failure is worth another attempt: `isRetryableClass(this.class)`. */
  get retryable(): boolean {
    return isRetryableClass(this.class);
  }
}

/**
 * Whether a value is an IdemError (with the given code, when one is given).
 *
 * It compares the `name` and `code` fields, not the prototype, so it holds across two copies of
 * this package and for errors that crossed a process boundary with those fields intact. Never
 * throws.
 */
export function isIdemError(e: unknown, code?: ErrorCode): e is IdemError {
  if (typeof e !== "object" || e === null) return false;
  const err = e as { name?: unknown; code?: unknown };
  if (err.name !== "IdemError" || typeof err.code !== "string") return false;
  return code === undefined || err.code === code;
}

const NODE_IO_CLASSES: Record<string, FailureClass> = {
  ENOSPC: "infrastructure",
  EDQUOT: "infrastructure",
  EROFS: "infrastructure",
  EACCES: "transient",
  EPERM: "transient",
  EBUSY: "transient",
  EAGAIN: "transient",
  ETIMEDOUT: "transient",
  ECONNREFUSED: "transient",
  ECONNRESET: "transient",
  EPIPE: "transient",
  EIO: "transient",
  EMFILE: "transient",
  ENFILE: "transient",
};

/**
 * Classifies any thrown value with the failure classes of docs/concepts.md.
 *
 * An IdemError keeps its class (the journal's SQLite adapter wraps SQLite's errors into IdemErrors,
 * so SQLite codes never reach here); a Node error is classified by its `code` (ENOSPC
 * `infrastructure`, EBUSY, ECONNRESET and the like `transient`, an extended code by its prefix);
 * anything else is `logic`, so an unknown failure is never retried blindly. Never throws.
 */
export function classifyError(e: unknown): FailureClass {
  if (isIdemError(e)) return e.class;
  if (typeof e === "object" && e !== null) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      const direct = NODE_IO_CLASSES[code];
      if (direct) return direct;
      const prefix = Object.keys(NODE_IO_CLASSES).find((k) => code.startsWith(`${k}_`));
      if (prefix) return NODE_IO_CLASSES[prefix] as FailureClass;
    }
  }
  return "logic";
}

/**
 * A one-line description of any thrown value, for `last_error` columns and logs.
 *
 * The message, prefixed with the error's `code` when the message does not already name it, with
 * every URL's credentials redacted (`redactUrl`): what it answers may be stored and shown. Never
 * throws.
 */
export function describeError(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return redactUrl(
      typeof code === "string" && !e.message.includes(code) ? `${code}: ${e.message}` : e.message,
    );
  }
  return redactUrl(String(e));
}
