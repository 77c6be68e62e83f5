import type { Logger } from "@idem/runtime";
import { describeError, retry } from "@idem/schema";
import { isNotReadyYet } from "./not-ready.js";

/**
 * Runs `start` until it succeeds, waiting out what `isNotReadyYet` says with backoff (0.5 s
 * doubling to 5 s) and a warning per attempt, so `idem executor` and `idem interpreter` started
 * during an outage come up when it ends instead of exiting. `start` must clean up after itself
 * when it throws.
 * @returns undefined when `signal` aborted while waiting (the process was told to stop).
 * @throws the first error that is not an outage.
 */
export async function whenAvailable<T>(
  what: string,
  start: () => Promise<T>,
  options: { logger: Logger; signal: AbortSignal },
): Promise<T | undefined> {
  try {
    return await retry(start, {
      initialMs: 500,
      maxMs: 5_000,
      retryable: (e) => isNotReadyYet(e) && !options.signal.aborted,
      onRetry: (e, delay) =>
        options.logger.warn(
          { event: "start.waiting", err: describeError(e), retryInMs: delay },
          `${what} is not available yet: waiting`,
        ),
      signal: options.signal,
    });
  } catch (e) {
    if (options.signal.aborted && isNotReadyYet(e)) return undefined;
    throw e;
  }
}
