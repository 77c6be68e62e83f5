/** A sleeping place for Atomics.wait: a synchronous sleep without spinning the CPU. */
const SLEEP = new Int32Array(new SharedArrayBuffer(4));

/**
 * SQLITE_BUSY or one of its extended codes (better-sqlite3 reports those): SQLITE_BUSY_RECOVERY
 * while another process rebuilds the WAL index, which processes opening one journal at once meet,
 * and SQLITE_BUSY_TIMEOUT. "database is locked", all of them: wait for the lock, as for the plain one.
 */
export const isBusy = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_"));
};

/**
 * Runs `attempt` until it does not throw busy (`isBusy`), sleeping between tries from `firstMs`,
 * doubling up to `maxMs`, with jitter; the busy error is thrown once `timeoutMs` have passed, any
 * other error at once. Synchronous, as better-sqlite3 is.
 */
export function whileBusy<T>(
  attempt: () => T,
  timeoutMs: number,
  delays: { firstMs: number; maxMs: number },
): T {
  const deadline = Date.now() + timeoutMs;
  for (let delayMs = delays.firstMs; ; delayMs = Math.min(delayMs * 2, delays.maxMs)) {
    try {
      return attempt();
    } catch (e) {
      if (!isBusy(e) || Date.now() >= deadline) throw e;
    }
    Atomics.wait(SLEEP, 0, 0, delayMs * (0.5 + Math.random()));
  }
}
