const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * Calls `onStop` once, at the first SIGTERM or SIGINT, and returns a function that removes the
 * handlers. After the first, the other signal is ignored once: Ctrl-C on `idem up` reaches this
 * process and then up sends SIGTERM, one stop that is said once. The same signal a second time (a
 * second Ctrl-C, or up passing on its second one) calls `onForce` when given, and so does every
 * signal after it: a process that must not die before it has cleaned up (the executor kills its
 * agents' process groups and gives their jobs back) ends by itself, soon. Without `onForce` it is
 * left to its default, so a second Ctrl-C ends a drain that takes too long at once.
 */
export function onStopSignal(
  onStop: (signal: NodeJS.Signals) => void,
  onForce?: (signal: NodeJS.Signals) => void,
): () => void {
  let first: NodeJS.Signals | undefined;
  let pairIgnored = false;
  const handler = (signal: NodeJS.Signals) => {
    if (first === undefined) {
      first = signal;
      if (!onForce) process.off(signal, handler);
      onStop(signal);
      return;
    }
    if (signal !== first && !pairIgnored) {
      pairIgnored = true;
      if (!onForce) process.off(signal, handler);
      return;
    }
    if (onForce) onForce(signal);
    else process.off(signal, handler);
  };
  for (const s of STOP_SIGNALS) process.on(s, handler);
  return () => {
    for (const s of STOP_SIGNALS) process.off(s, handler);
  };
}
