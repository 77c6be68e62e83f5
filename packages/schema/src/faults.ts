/**
 * The named crash windows of docs/reliability.md ("Fault points").
 *
 * Each is a point where a crash must leave the journal and the targets recoverable.
 * `IDEM_FAULT=<point>[:<n>]` kills the process the n-th time it reaches one.
 */
export const FAULT_POINTS = {
  EXECUTOR_AFTER_RUN: "executor.after-run",
  EXECUTOR_AFTER_RECORD: "executor.after-record",
  INTERPRETER_AFTER_CLAIM: "interpreter.after-claim",
  INTERPRETER_AFTER_INTENT: "interpreter.after-intent",
  /** A remote git target: the push succeeded, nothing of it is in the ledger yet. */
  INTERPRETER_AFTER_PUSH: "interpreter.after-push",
  /**
   * A local git target: one ref transaction moved the branch over a batch of effects' commits (or
   * one) with their key refs; the checked-out working tree not yet synced, nothing in the ledger.
   */
  INTERPRETER_AFTER_BRANCH_MOVE: "interpreter.after-branch-move",
  INTERPRETER_AFTER_APPLY: "interpreter.after-apply",
  INTERPRETER_AFTER_EFFECT_RECORD: "interpreter.after-effect-record",
  INTERPRETER_BEFORE_DONE: "interpreter.before-done",
  /** Holding a run's lease, about to park it awaiting a person's approval (docs/approvals.md). */
  INTERPRETER_BEFORE_AWAIT: "interpreter.before-await",
  JOURNAL_COPY_BEFORE_COMMIT: "journal-copy.before-commit",
  JOURNAL_COPY_AFTER_BATCH: "journal-copy.after-batch",
} as const;
/** One of the values of FAULT_POINTS, as written in `IDEM_FAULT`. */
export type FaultPoint = (typeof FAULT_POINTS)[keyof typeof FAULT_POINTS];
const ALL_POINTS = new Set<string>(Object.values(FAULT_POINTS));
/** The namespaces of idem's own processes: a point there must be one of FAULT_POINTS. */
const IDEM_NAMESPACES = new Set(Object.values(FAULT_POINTS).map((p) => p.split(".")[0] as string));
const KIND_POINT = /^[a-z][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$/;

/**
 * Whether `point` can be an effect kind's own fault point (`acme.after-create`, the kind's
 * `faultPoints`): `<namespace>.<name>`, 64 characters at most, in a namespace that is not one of
 * idem's processes (`executor`, `interpreter`, `journal-copy`), where only FAULT_POINTS exist.
 */
export function isKindFaultPoint(point: string): boolean {
  return (
    point.length <= 64 &&
    KIND_POINT.test(point) &&
    !IDEM_NAMESPACES.has(point.split(".")[0] as string)
  );
}

/** Called at every fault point; a no-op unless a fault is armed. */
export type FaultHook = (point: FaultPoint) => void;

/** The hook of a process without a drill: does nothing at every point. */
export const noFault: FaultHook = () => {};

/**
 * Builds the fault hook for `IDEM_FAULT=<point>[:<n>]`.
 *
 * `onHit` runs the n-th time the point is reached (the apps pass a SIGKILL of their own process),
 * and never again. Unset or empty: `noFault`. The point is one of FAULT_POINTS, or an effect
 * kind's own point (`isKindFaultPoint`: the kinds load after the hook is built, so such a name is
 * taken as written; `idem kinds` lists each kind's points).
 * @throws TypeError on an unknown point of idem's own processes (`interpreter.after-aply`), a
 *   malformed name or a bad count, so a typo never silently disarms a drill.
 */
export function createFaultHook(
  spec: string | undefined,
  onHit: (point: FaultPoint) => void,
): FaultHook {
  if (spec === undefined || spec === "") return noFault;
  const [point, countText] = spec.split(":");
  if (point === undefined || !(ALL_POINTS.has(point) || isKindFaultPoint(point))) {
    throw new TypeError(
      `IDEM_FAULT: unknown fault point "${point}"; known: ${[...ALL_POINTS].join(", ")}`,
    );
  }
  const target = countText === undefined ? 1 : Number(countText);
  if (!Number.isInteger(target) || target < 1)
    throw new TypeError(`IDEM_FAULT: bad count "${countText}"`);
  let seen = 0;
  return (p) => {
    if (p !== point) return;
    seen += 1;
    if (seen === target) onHit(p);
  };
}
