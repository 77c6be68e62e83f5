/**
 * Waits `ms` milliseconds, or less when `signal` aborts (at once if it already has). Never
 * rejects: a caller that was woken by the signal checks it itself. The timer and the listener are
 * removed either way, so a long-lived signal does not collect listeners.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
