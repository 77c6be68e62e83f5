import { sleep } from "./sleep.js";

/** An exponential backoff: `initialMs`, then times `factor` per step, capped at `maxMs`. */
export interface BackoffPolicy {
  /** The first delay. */
  initialMs: number;
  /** The longest delay; every step after reaching it repeats it. */
  maxMs: number;
  /** Growth per step; default 2. */
  factor?: number;
}

/** The delays of one sequence of retries; `reset()` starts over at the first delay. */
export interface Backoff {
  /** The delay to wait now; the following call returns the next step. */
  next(): number;
  /** Back to `initialMs` (e.g. after a process ran long enough to count as healthy). */
  reset(): void;
}

/** Creates a {@link Backoff} on a policy. Pure; no timer. */
export function createBackoff(policy: BackoffPolicy): Backoff {
  const factor = policy.factor ?? 2;
  let delay = policy.initialMs;
  return {
    next() {
      const current = delay;
      delay = Math.min(delay * factor, policy.maxMs);
      return current;
    },
    reset() {
      delay = policy.initialMs;
    },
  };
}

/**
 * The delay of attempt `attempt` (0 for the first) on a configured schedule such as
 * `queue.backoffMs`: its last step repeats; `whenEmptyMs` for an empty schedule. Pure.
 */
export function scheduledDelay(
  schedule: readonly number[],
  attempt: number,
  whenEmptyMs: number,
): number {
  if (schedule.length === 0) return whenEmptyMs;
  return schedule[Math.min(Math.max(0, attempt), schedule.length - 1)] as number;
}

/** When and how {@link retry} tries an operation again. */
export interface RetryPolicy extends BackoffPolicy {
  /** False ends the retries: the error is thrown. Default: every error is retried. */
  retryable?: (error: unknown) => boolean;
  /** Told before each wait (log it, count it); must not throw. */
  onRetry?: (error: unknown, delayMs: number) => void;
  /** Cuts a wait short (the next attempt then runs at once); `retryable` decides whether to go on. */
  signal?: AbortSignal;
}

/**
 * Runs `op` until it resolves, waiting by the policy's backoff between attempts, for as long as
 * `retryable` says so: with no such limit it retries forever. The first attempt runs at once, with
 * no timer and no allocation beyond the call. `op` must be safe to run again (idempotent).
 * @throws the error of the attempt that `retryable` refused.
 */
export async function retry<T>(op: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  try {
    return await op();
  } catch (e) {
    return await retryAfter(e, op, policy);
  }
}

/**
 * {@link retry} after a first attempt the caller made itself and saw fail with `error`: for a hot
 * path that calls its operation directly and only pays for the retry machinery when it fails.
 * @throws the error of the attempt that `retryable` refused (`error` itself when it is refused).
 */
export async function retryAfter<T>(
  error: unknown,
  op: () => Promise<T>,
  policy: RetryPolicy,
): Promise<T> {
  const backoff = createBackoff(policy);
  let failure = error;
  for (;;) {
    if (policy.retryable && !policy.retryable(failure)) throw failure;
    const delay = backoff.next();
    policy.onRetry?.(failure, delay);
    await sleep(delay, policy.signal);
    try {
      return await op();
    } catch (e) {
      failure = e;
    }
  }
}
