const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * Calls `onStop` once, at the first SIGTERM or SIGINT, and returns a function that removes the
 * handlers. After the first, the other signal is ignored: Ctrl-C on `idem up` reaches this process
 * and then up sends SIGTERM, one stop that is said once. The same signal a second time is left to
 * its default, so a second Ctrl-C ends a drain that takes too long at once.
 */
export function onStopSignal(onStop: (signal: NodeJS.Signals) => void): () => void {
  let stopped = false;
  const handler = (signal: NodeJS.Signals) => {
    process.off(signal, handler);
    if (stopped) return;
    stopped = true;
    onStop(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, handler);
  return () => {
    for (const s of STOP_SIGNALS) process.off(s, handler);
  };
}
