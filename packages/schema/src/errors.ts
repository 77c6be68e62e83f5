/** The failure classes of DESIGN.md, one enum everywhere. */
export const FAILURE_CLASSES = [
  "transient",
  "infrastructure",
  "validation",
  "conflict",
  "uncertain",
  "logic",
] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/** Retryable classes: a run or delivery failing with one of these is tried again after a backoff. */
export function isRetryableClass(c: FailureClass): boolean {
  return c === "transient" || c === "infrastructure";
}

/**
 * One table of error codes. Each code carries its failure class; retryability follows
 * from the class. The CLI maps codes to exit codes in one table of its own.
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
} as const satisfies Record<string, { class: FailureClass }>;
export type ErrorCode = keyof typeof ERROR_CODES;

export interface IdemErrorOptions {
  cause?: unknown;
  details?: Record<string, unknown>;
  /** Overrides the code's default class (e.g. an I/O error known to be permanent). */
  class?: FailureClass;
}

/** The one error class of idem: a code, a failure class and a retry decision. */
export class IdemError extends Error {
  override readonly name = "IdemError";
  readonly code: ErrorCode;
  readonly class: FailureClass;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: IdemErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.class = options.class ?? ERROR_CODES[code].class;
    this.details = options.details;
  }

  get retryable(): boolean {
    return isRetryableClass(this.class);
  }
}

/** Identity check that survives two copies of this package: compares the name and code, not the prototype. */
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

/** Classifies any thrown value with DESIGN.md's failure classes. Unknown errors are `logic`. */
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

/** A short one-line description of any thrown value, for journal `last_error` columns and logs. */
export function describeError(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === "string" && !e.message.includes(code)
      ? `${code}: ${e.message}`
      : e.message;
  }
  return String(e);
}
