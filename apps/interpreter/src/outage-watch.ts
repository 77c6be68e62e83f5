import type { Logger } from "@idem/runtime";
import { describeError, IdemError, isIdemError } from "@idem/schema";

/**
 * How long a drain's journal has been UNAVAILABLE without a break: `exceeded(e)` is true (and
 * `gaveUp` set) once an UNAVAILABLE comes `limitMs` after the first one of the outage; anything
 * else is not an outage. `answered()` ends the outage.
 */
export function outageWatch(limitMs: number, log: Logger) {
  let since: number | undefined;
  const watch = {
    gaveUp: undefined as IdemError | undefined,
    answered() {
      since = undefined;
    },
    exceeded(e: unknown): boolean {
      if (watch.gaveUp) return true;
      if (!isIdemError(e, "UNAVAILABLE")) return false;
      const now = Date.now();
      since ??= now;
      if (now - since < limitMs) return false;
      watch.gaveUp = new IdemError(
        "UNAVAILABLE",
        `the journal has been unavailable for ${Math.round((now - since) / 1000)} s (the drain waits ${Math.round(limitMs / 1000)} s at most): ${e.message}`,
        { cause: e },
      );
      log.error(
        { event: "interpreter.drain-gave-up", err: describeError(e) },
        watch.gaveUp.message,
      );
      return true;
    },
  };
  return watch;
}
