import { redactUrl } from "./redact-url.js";

/**
 * The failure classes of DESIGN.md, one enum everywhere.
 *
 * `transient` (I/O, lock, timeout, unavailable), `infrastructure` (crash, lost lease, out of disk),
 * `validation` (the output or spec is impossible), `conflict` (the target moved), `uncertain` (the
 * outcome is unknown: a human decides), `logic` (anything else), and `unknown-agent` (a job for an
 * agent that no `agents.<name>` of the executor that took it names: dead-lettered at once). Only
 * `transient` and `infrastructure` are retried.
 */
export const FAILURE_CLASSES = [
  "transient",
  "infrastructure",
  "validation",
  "conflict",
  "uncertain",
  "logic",
  "unknown-agent",
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
 * The one table of error codes: each code with its failure class, from which retryability follows.
 *
 * A new code is added here and nowhere else; the CLI maps codes to exit codes in one table of its
 * own, and tests assert on codes, never on message text.
 */
export const ERROR_CODES = {
  INVALID_INPUT: { class: "validation" },
  INVALID_CONFIG: { class: "validation" },
  UNKNOWN_ALIAS: { class: "validation" },
  OUTPUT_TOO_LARGE: { class: "validation" },
  SANDBOX_VIOLATION: { class: "validation" },
  OUTPUT_CONFLICT: { class: "conflict" },
  JOB_CONFLICT: { class: "conflict" },
  TARGET_CONFLICT: { class: "conflict" },
  TARGET_MOVED: { class: "transient" },
  ORDER_BLOCKED: { class: "transient" },
  TARGET_MISSING: { class: "infrastructure" },
  DIRTY_WORKTREE: { class: "conflict" },
  LOCKED: { class: "transient" },
  TIMEOUT: { class: "transient" },
  UNAVAILABLE: { class: "transient" },
  IO: { class: "transient" },
  DISK_FULL: { class: "infrastructure" },
  LEASE_LOST: { class: "infrastructure" },
  NOT_FOUND: { class: "logic" },
  INVALID_STATE: { class: "logic" },
  OUTCOME_UNKNOWN: { class: "uncertain" },
  INVARIANT_VIOLATION: { class: "logic" },
  AGENT_FAILED: { class: "transient" },
  INTEGRITY: { class: "logic" },
  UNKNOWN_AGENT: { class: "unknown-agent" },
} as const satisfies Record<string, { class: FailureClass }>;
/** A key of ERROR_CODES. */
export type ErrorCode = keyof typeof ERROR_CODES;

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
  SQLITE_BUSY: "transient",
  SQLITE_LOCKED: "transient",
  SQLITE_FULL: "infrastructure",
  SQLITE_IOERR: "transient",
  SQLITE_READONLY: "transient",
  SQLITE_CANTOPEN: "transient",
};

/**
 * Classifies any thrown value with DESIGN.md's failure classes.
 *
 * An IdemError keeps its class; a Node or SQLite error is classified by its `code` (ENOSPC and
 * SQLITE_FULL `infrastructure`, EBUSY, ECONNRESET, SQLITE_BUSY and the like `transient`, extended
 * SQLite codes by their prefix); anything else is `logic`, so an unknown failure is never retried
 * blindly. Never throws.
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
