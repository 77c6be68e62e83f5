/**
 * The states of runs, effects and jobs, and the moves between them (docs/concepts.md, "States"):
 * vocabulary every part shares. The journal's adapters write these names, and readers (the
 * interpreter, the console, ops) branch on the sets defined here.
 */

/** The states of a run (one interpretation of one output). */
export const RUN_STATES = ["pending", "running", "failed", "awaiting", "done", "dead"] as const;
/**
 * A run's state: pending, running (leased), failed (waiting for a retry), awaiting (a person's
 * approval of its next effect, docs/approvals.md: no lease, never claimed until approved), done or
 * dead.
 */
export type RunState = (typeof RUN_STATES)[number];
/**
 * Active runs: still being interpreted. A replay never creates a generation beside one, a prune
 * keeps its output, and only active runs hold their place in the per-target order.
 */
export const ACTIVE_RUN_STATES: readonly RunState[] = ["pending", "running", "failed"];
/** A run that is still being interpreted. */
export type ActiveRunState = "pending" | "running" | "failed";
/**
 * Unfinished runs: the active ones and those awaiting an approval. A replay never creates a
 * generation beside one and a prune keeps its output; an awaiting run keeps its place in the
 * per-target order too (its targets stay held) but is never due: only a decision moves it.
 */
export const UNFINISHED_RUN_STATES: readonly RunState[] = [...ACTIVE_RUN_STATES, "awaiting"];
/** Whether a run in `state` is unfinished: pending, running, failed, or awaiting an approval. */
export const isActiveRun = (state: RunState): state is ActiveRunState | "awaiting" =>
  state === "pending" || state === "running" || state === "failed" || state === "awaiting";

/**
 * The moves a run makes, from each state. `running -> running` is a takeover of an expired lease;
 * `dead -> pending` is a human's resolution of its last uncertain effect; `awaiting -> pending` an
 * approval, `awaiting -> dead` a rejection or an expiry (class `rejected`); a replay never moves a
 * run, it adds the next generation.
 */
export const RUN_TRANSITIONS: Readonly<Record<RunState, readonly RunState[]>> = {
  pending: ["running"],
  running: ["running", "pending", "failed", "awaiting", "done", "dead"],
  failed: ["running"],
  awaiting: ["pending", "dead"],
  done: [],
  dead: ["pending"],
};

/** The states of an effect in the ledger, per key and generation. */
export const EFFECT_STATES = [
  "intended",
  "applied",
  "present",
  "failed",
  "uncertain",
  "skipped",
] as const;
/** An effect's state in one generation's ledger. */
export type EffectState = (typeof EFFECT_STATES)[number];
/**
 * Settled effect states: nothing more to do in this generation. A run completes only when every
 * effect of its generation is settled. Defined here once: everyone branching on it imports it.
 */
export const SETTLED_EFFECT_STATES: readonly EffectState[] = ["applied", "present", "skipped"];
/** A settled effect state: applied, present or skipped. */
export type SettledEffectState = "applied" | "present" | "skipped";
/** Whether an effect in `state` needs nothing more in its generation (applied, present, skipped). */
export const isSettledEffect = (state: EffectState): state is SettledEffectState =>
  state === "applied" || state === "present" || state === "skipped";
/** Effect states an `intend` reopens (another attempt); any other state is answered as it is. */
export const REINTENDABLE_EFFECT_STATES: readonly EffectState[] = ["intended", "failed"];
/** The effect a human's resolution of a dead run settles: the first in this order of states. */
export const RESOLVABLE_EFFECT_STATES: readonly EffectState[] = ["uncertain", "failed", "intended"];
/** Effect states that keep a resolved run dead: once none is left, the run is pending again. */
export const BLOCKING_EFFECT_STATES: readonly EffectState[] = ["uncertain"];

/** The states of a job in the queue/outbox. */
export const JOB_STATES = ["queued", "running", "done", "dead"] as const;
/** A job's state: queued (due at a time), running (a delivery holds it), done (output recorded), dead. */
export type JobState = (typeof JOB_STATES)[number];
/** Jobs still waiting for an output: queued, or running under a delivery's lease (maybe expired). */
export const UNFINISHED_JOB_STATES: readonly JobState[] = ["queued", "running"];

/**
 * The moves a job makes, from each state. `running -> running` is a new delivery after the lease
 * expired; `dead -> queued` is a dead letter retried; every state moves to done when the job's output
 * is recorded.
 */
export const JOB_TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  queued: ["running", "done", "dead"],
  running: ["running", "queued", "done", "dead"],
  done: [],
  dead: ["queued", "done"],
};
