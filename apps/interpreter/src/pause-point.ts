import { createFaultHook, type FaultHook } from "@idem/schema";

/**
 * `IDEM_PAUSE=<point>[:<n>]`: the process SIGSTOPs itself the n-th time it reaches a fault point,
 * alongside any `IDEM_FAULT` hook (`fault`). A fencing drill's way to stop an interpreter at an
 * exact step, e.g. `interpreter.after-claim`: holding its run's lease and no repository lock, so
 * the test never depends on when a SIGSTOP from outside happens to land. Unset: `fault` unchanged.
 * @throws TypeError on an unknown point or a bad count, as `IDEM_FAULT` does.
 */
export function withPausePoint(fault: FaultHook, spec: string | undefined): FaultHook {
  const pause = createFaultHook(spec, () => {
    process.kill(process.pid, "SIGSTOP");
  });
  if (spec === undefined || spec === "") return fault;
  return (point) => {
    pause(point);
    fault(point);
  };
}
