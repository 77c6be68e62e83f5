import { IdemError } from "@idem/schema";
import type { ProbeResult } from "./effect-kind.js";

/** The probe's answer: the effect is at the target (with what to store, e.g. `{ id }`). */
export function present(detail: Record<string, unknown> = {}): ProbeResult {
  return { status: "present", detail };
}

/** The probe's answer: the effect is not at the target (with what apply needs, e.g. `{ base }`). */
export function absent(detail: Record<string, unknown> = {}): ProbeResult {
  return { status: "absent", detail };
}

/** The probe's answer: the target moved so that the effect cannot be applied as written. */
export function conflict(reason: string): ProbeResult {
  return { status: "conflict", reason };
}

/** How long a transient failure asks to wait before the next attempt (a rate limit's reset). */
export interface TransientOptions {
  /** The wait the target asked for; the run's retry waits at least this long. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
  details?: Record<string, unknown>;
}

/**
 * The failures a kind distinguishes, each an IdemError with the code idem acts on:
 * - `transient`: try again later (UNAVAILABLE: a timeout, a 5xx, a rate limit), with backoff,
 *   at least `retryAfterMs`;
 * - `invalid`: the spec can never work (INVALID_INPUT naming the field): never retried;
 * - `conflict`: the target moved so that the effect cannot be applied (TARGET_CONFLICT): never
 *   forced, the run waits for a person;
 * - `moved`: a compare-and-swap lost (TARGET_MOVED): probed again at once;
 * - `unknownOutcome`: the request may or may not have taken effect, and the probe cannot tell
 *   (OUTCOME_UNKNOWN): `uncertain`, for a person;
 * - `missing`: the target itself is gone or unreachable by config (TARGET_MISSING).
 */
export const fail = {
  transient(message: string, options: TransientOptions = {}): IdemError {
    const details = {
      ...options.details,
      ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }),
    };
    return new IdemError("UNAVAILABLE", message, {
      ...(options.cause === undefined ? {} : { cause: options.cause }),
      ...(Object.keys(details).length > 0 ? { details } : {}),
    });
  },
  invalid(field: string, message: string): IdemError {
    return new IdemError("INVALID_INPUT", `${field} ${message}`, { details: { field } });
  },
  conflict(message: string, cause?: unknown): IdemError {
    return new IdemError("TARGET_CONFLICT", message, cause === undefined ? {} : { cause });
  },
  moved(message: string): IdemError {
    return new IdemError("TARGET_MOVED", message);
  },
  unknownOutcome(message: string, cause?: unknown): IdemError {
    return new IdemError("OUTCOME_UNKNOWN", message, cause === undefined ? {} : { cause });
  },
  missing(message: string, cause?: unknown): IdemError {
    return new IdemError("TARGET_MISSING", message, cause === undefined ? {} : { cause });
  },
};

/**
 * Refuses a spec before record, naming the field: `check` throws it.
 * @throws IdemError INVALID_INPUT with `details.field`.
 */
export function invalid(field: string, message: string): never {
  throw fail.invalid(field, message);
}

/**
 * The wait an HTTP answer asks for, in ms: `Retry-After` (seconds or an HTTP date), else
 * `x-ratelimit-reset` (epoch seconds) when `x-ratelimit-remaining` is 0; undefined when it asks
 * for none. Pure but for `now`.
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const after = headers.get("retry-after");
  if (after !== null) {
    const seconds = Number(after);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const at = Date.parse(after);
    if (Number.isFinite(at)) return Math.max(0, at - now);
  }
  const reset = headers.get("x-ratelimit-reset");
  if (reset !== null && headers.get("x-ratelimit-remaining") === "0") {
    const at = Number(reset) * 1000;
    if (Number.isFinite(at)) return Math.max(0, at - now);
  }
  return undefined;
}
