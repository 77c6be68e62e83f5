import { type FailureClass, IdemError } from "@idem/schema";
import type { JobState, RunState } from "./states.js";

/**
 * What a second submission of a recorded job ID is: the same content hash is a `duplicate` (an
 * event only, the caller is answered as for the first), another hash a `conflict` (refused, kept
 * as evidence). First write wins, so the answer never depends on which submission is retried.
 */
export const recordOutcome = (existingHash: string, hash: string): "duplicate" | "conflict" =>
  existingHash === hash ? "duplicate" : "conflict";

/**
 * How many distinct conflicting bodies one job keeps in `rejections`. Past it a new conflicting
 * content is kept as a row without its body (`body` empty: its hash, source and time only), and
 * counted as dropped in the journal's status: an agent that keeps answering one job differently
 * cannot fill the journal with bodies (issue 42).
 */
export const REJECTED_BODIES_PER_JOB = 10;

/**
 * What a conflict does to `rejections`, from what the job holds there: `known` (this content has a
 * row already: an event only), `keep` (a new row with its body), or `drop-body` (a new row without
 * its body: the job keeps REJECTED_BODIES_PER_JOB bodies already).
 */
export const rejectionDecision = (
  bodiesKept: number,
  known: boolean,
): "known" | "keep" | "drop-body" =>
  known ? "known" : bodiesKept >= REJECTED_BODIES_PER_JOB ? "drop-body" : "keep";

/** The body of a rejection row that was kept without it (see REJECTED_BODIES_PER_JOB). */
export const DROPPED_BODY = "";

/**
 * What a second enqueue of one job ID is: the same input hash (see `jobInput`) is a `duplicate`,
 * another a `conflict` (refused with a `job.conflict` event).
 */
export const enqueueOutcome = (existingHash: string, hash: string): "duplicate" | "conflict" =>
  existingHash === hash ? "duplicate" : "conflict";

/** What a claim does with a due run: claim it (a takeover when its lease expired) or end it dead. */
export type RunClaimDecision =
  | { action: "claim"; takeover: boolean }
  | { action: "dead"; error: string };

/**
 * The claim of a due run: a running one (its lease expired) is a takeover, counted as a lease
 * expiry; at `maxLeaseExpiries` expiries it goes dead (class infrastructure) instead, since the
 * interpreters holding it keep dying.
 */
export function runClaimDecision(
  run: { state: RunState; lease_expiries: number },
  maxLeaseExpiries: number,
): RunClaimDecision {
  const takeover = run.state === "running";
  if (takeover && run.lease_expiries + 1 >= maxLeaseExpiries) {
    return {
      action: "dead",
      error: `lease expired ${run.lease_expiries + 1} times (maxLeaseExpiries ${maxLeaseExpiries}): the interpreter holding it keeps dying`,
    };
  }
  return { action: "claim", takeover };
}

/** How many later runs a dead run's error names (one more is read to know there are more). */
export const LATER_RUNS_NAMED = 20;

/** The note a dead run's error gets: the later runs on its targets that now go ahead of it. */
export function laterRunsNote(later: readonly string[]): string {
  if (later.length === 0) return "";
  const named = later.slice(0, LATER_RUNS_NAMED).join(", ");
  return `; later runs on its targets go ahead: ${named}${later.length > LATER_RUNS_NAMED ? ", ..." : ""}`;
}

/** The outcome of a delivery's claim of a job, before any lease is written. */
export type JobClaimDecision =
  | { status: "conflict" }
  | { status: "dead" }
  | { status: "recorded" }
  | { status: "held"; until: number }
  | { status: "acquire" };

/**
 * The claim of a delivered job: another input under its ID is a `conflict`, a dead-lettered job
 * `dead`, a job whose output is recorded `recorded` (ack it), one leased to a live delivery `held`;
 * otherwise the delivery acquires it (a new delivery after an expired lease included).
 */
export function jobClaimDecision(
  job: { input_hash: string; state: JobState; lease_until: number | null },
  hash: string,
  now: number,
): JobClaimDecision {
  if (job.input_hash !== hash) return { status: "conflict" };
  if (job.state === "dead") return { status: "dead" };
  if (job.state === "done") return { status: "recorded" };
  if (job.state === "running" && job.lease_until !== null && job.lease_until > now) {
    return { status: "held", until: job.lease_until };
  }
  return { status: "acquire" };
}

/**
 * The dead letter of a job delivered `maxDeliver` times already, or undefined while it may be
 * delivered again. A job still running (its lease expired) dies of infrastructure; a queued one of
 * its last failure's class.
 */
export function exhaustedDelivery(
  job: {
    state: JobState;
    deliveries: number;
    last_class: FailureClass | null;
    last_error: string | null;
  },
  maxDeliver: number | undefined,
): { class: FailureClass; error: string; deliveries: number } | undefined {
  if (maxDeliver === undefined || job.deliveries < maxDeliver) return undefined;
  return {
    class: job.state === "running" ? "infrastructure" : (job.last_class ?? "transient"),
    error: job.last_error ?? `lease expired after ${job.deliveries} deliveries`,
    deliveries: job.deliveries,
  };
}

/**
 * Checks a human's resolution has a reason.
 * @throws INVALID_INPUT when the reason is blank.
 */
export function assertResolutionReason(reason: string): void {
  if (reason.trim() === "")
    throw new IdemError("INVALID_INPUT", "a resolution needs a reason", {
      details: { field: "reason" },
    });
}

/** The detail a resolved effect keeps: its own, plus who resolved it and why. */
export const resolvedDetail = (
  detail: Record<string, unknown> | null,
  actor: string,
  reason: string,
): Record<string, unknown> => ({ ...(detail ?? {}), resolvedBy: actor, reason });

/**
 * The latest run of a job that a human resolution may settle: it must exist and be dead.
 * @throws NOT_FOUND without a run; INVALID_STATE when the latest run is not dead.
 */
export function assertResolvableRun<R extends { state: string }>(
  jobId: string,
  run: R | undefined,
): asserts run is R {
  if (!run) throw new IdemError("NOT_FOUND", `no run for job ${jobId}`);
  if (run.state !== "dead") {
    throw new IdemError(
      "INVALID_STATE",
      `the latest run of ${jobId} is ${run.state}, not dead: nothing to resolve`,
    );
  }
}

/**
 * The open (uncertain, else failed) effect of a dead run that a resolution settles, and, when the
 * caller names one, the effect it expects.
 * @throws INVALID_STATE when the run has none, or when it is another effect than `expectKey`.
 */
export function assertResolvableEffect<E extends { key: string }>(
  jobId: string,
  generation: number,
  effect: E | undefined,
  expectKey: string | undefined,
): asserts effect is E {
  if (!effect) {
    throw new IdemError(
      "INVALID_STATE",
      `run ${jobId}#${generation} has no uncertain or failed effect; use dlq retry`,
    );
  }
  if (expectKey !== undefined && effect.key !== expectKey) {
    throw new IdemError(
      "INVALID_STATE",
      `the open effect of ${jobId} is ${effect.key}, not ${expectKey}: it changed meanwhile`,
    );
  }
}

/**
 * A resolved dead run goes back in its place on its targets, ahead of the runs recorded after it;
 * a later run that went ahead while it was dead and is running now holds one of those targets, and
 * the resolved run claimed beside it would make two holders of one target. `holders` are the later
 * runs on its targets that are running.
 * @throws INVALID_STATE naming them: resolve again once they are done (or dead).
 */
export function assertTargetsFree(jobId: string, holders: readonly { job_id: string }[]): void {
  if (holders.length === 0) return;
  const named = [...new Set(holders.map((h) => h.job_id))];
  throw new IdemError(
    "INVALID_STATE",
    `the run of ${jobId} cannot go back on its targets while a later run holds one: ${named.join(", ")} went ahead and is running; resolve again once it is done`,
    { details: { heldBy: named } },
  );
}
