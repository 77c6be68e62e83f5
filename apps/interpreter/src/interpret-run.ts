import {
  decideEffect,
  effectInFilter,
  type FileWriteIndex,
  type Logger,
  scheduledDelay,
  type Tracing,
} from "@idem/core";
import type { Effects, ProbeHint } from "@idem/effects";
import { type Claim, type EffectRecord, isSettledEffect, type JournalStore } from "@idem/journal";
import {
  type Clock,
  type Config,
  classifyError,
  contentHash,
  describeError,
  type EffectSpec,
  effectKey,
  FAULT_POINTS,
  type FailureClass,
  type FaultHook,
  IdemError,
  isIdemError,
  isRetryableClass,
} from "@idem/schema";
import type { InterpreterMetrics } from "./interpreter-metrics.js";

/** How many times an apply that lost a compare-and-swap (TARGET_MOVED) is re-probed at once before the run fails. */
const MOVED_RETRIES = 3;

/** How one claimed run ended in this interpreter. */
export interface RunOutcome {
  jobId: string;
  generation: number;
  /**
   * done: every effect settled. failed: a retry is scheduled. dead: waits for a human. released:
   * given back on shutdown. lease-lost: another holder took it over; nothing was written.
   */
  outcome: "done" | "failed" | "dead" | "released" | "lease-lost";
  class?: FailureClass;
  error?: string;
}

/** What the interpretation of a run works with; built once per interpreter. */
export interface InterpretRunContext {
  journal: JournalStore;
  effects: Effects;
  settings: Config["interpreter"];
  clock: Clock;
  fault: FaultHook;
  /** The interpreter's logger (with its owner); each run logs on a child with its job and generation. */
  log: Logger;
  metrics: InterpreterMetrics;
  /** Which file.write effects a later output supersedes. */
  writes: FileWriteIndex;
  /** Aborted when the interpreter stops: the run is released before its next effect. */
  stopSignal: AbortSignal;
  /** The claim, probe and apply spans, continuing the trace kept with the record; off by default. */
  tracing: Tracing;
  /** The ordering target of an effect (`repo:site@main`), an attribute of its spans. */
  targetOf(spec: EffectSpec): string | undefined;
}

/** Why a run stops early: the outcome is already decided and written. */
class RunEnded extends Error {
  override readonly name = "RunEnded";
  constructor(readonly outcome: RunOutcome) {
    super(outcome.outcome);
  }
}

/** An error raised by the target (probe or apply), as opposed to the journal. */
class EffectFailure extends Error {
  override readonly name = "EffectFailure";
  constructor(
    readonly error: unknown,
    readonly unprobeable: boolean,
    readonly dedup: boolean,
  ) {
    super(describeError(error), { cause: error });
  }
}

/**
 * Interprets one claimed run: decides, probes, applies and settles each effect of its output in
 * order (only those in the run's filter, `run.only`, for a replay by kind or target), with the fault points of DESIGN.md between the steps, and ends the run (done, a retry
 * after `interpreter.backoffMs`, dead, or released when `stopSignal` aborted).
 *
 * Crash safety: an intent is written before every apply, an effect found `intended` after a crash
 * is probed again (git probes only `base..branch` with the base recorded in the intent), and git
 * applies move the branch by compare-and-swap from the probed base, so a kill at any instant, a
 * second interpreter or a stale lease holder never applies an effect twice (invariants 1 and 5).
 * Every journal write carries the lease token, kept alive meanwhile: after a takeover the stale
 * holder gets LEASE_LOST, stops, and writes nothing more (outcome `lease-lost`). Does not throw:
 * when the journal cannot take the run's failure either, that is logged and the run is left to its
 * lease expiry (outcome `failed`).
 *
 * Traced as an `idem.claim` span (from `claimedAt`, when the claim was asked for, to the run's
 * end) with an `idem.probe` and an `idem.apply` span per probe and apply under it, all continuing
 * the trace context kept with the record: after a restart, a takeover or a replay too.
 */
export async function interpretRun(
  claim: Claim,
  context: InterpretRunContext,
  claimedAt?: number,
): Promise<RunOutcome> {
  const { journal, effects, settings, clock, fault, metrics, writes, stopSignal } = context;
  const { run, output } = claim;
  const lease = claim.lease;
  const base = { jobId: run.jobId, generation: run.generation };
  const rlog = context.log.child(base);
  const claimSpan = context.tracing.start("idem.claim", {
    parent: output.traceparent,
    ...(claimedAt === undefined ? {} : { startTime: claimedAt }),
    attributes: {
      "idem.job_id": run.jobId,
      "idem.agent": output.agent,
      "idem.generation": run.generation,
      "idem.run.takeover": claim.takeover,
      "idem.run.attempts": run.attempts,
    },
  });
  metrics.runs.inc({ outcome: claim.takeover ? "takeover" : "claimed" });
  rlog.info(
    { event: claim.takeover ? "run.takeover" : "run.claimed", attempts: run.attempts },
    "run claimed",
  );
  fault(FAULT_POINTS.INTERPRETER_AFTER_CLAIM);

  // Keep the lease alive while working; a takeover makes the next step stop (and any write fail).
  let lost = false;
  const keeper = setInterval(
    () => {
      journal.runs.extendLease(lease, settings.leaseMs).then(
        () => {},
        (e: unknown) => {
          if (isIdemError(e, "LEASE_LOST")) lost = true;
          else rlog.warn({ err: describeError(e) }, "lease extension failed; will try again");
        },
      );
    },
    Math.max(20, Math.floor(settings.leaseMs / 3)),
  );
  keeper.unref();

  const end = (outcome: RunOutcome): RunOutcome => {
    if (outcome.error !== undefined) claimSpan.fail(outcome.error);
    claimSpan.setAttributes({
      "idem.run.outcome": outcome.outcome,
      "idem.failure_class": outcome.class,
    });
    claimSpan.end();
    metrics.runs.inc({ outcome: outcome.outcome });
    const line = { event: `run.${outcome.outcome}`, class: outcome.class, error: outcome.error };
    if (outcome.outcome === "dead" || outcome.outcome === "lease-lost")
      rlog.warn(line, "run ended");
    else rlog.info(line, "run ended");
    return outcome;
  };

  const dead = async (cls: FailureClass, error: string): Promise<never> => {
    await journal.runs.markDead(lease, { class: cls, error });
    throw new RunEnded({ ...base, outcome: "dead", class: cls, error });
  };

  try {
    const specs = output.output.effects;
    for (let i = 0; i < specs.length; i++) {
      if (lost) throw new IdemError("LEASE_LOST", `lease on ${run.jobId} was taken over`);
      if (stopSignal.aborted) {
        await journal.runs.release(lease);
        return end({ ...base, outcome: "released" });
      }
      const spec = specs[i] as EffectSpec;
      // A replay's filter (on the run record, so any host honours it): the rest is left as it was.
      if (effectInFilter(spec, run.only)) await interpretEffect(i, spec);
    }
    if (lost) throw new IdemError("LEASE_LOST", `lease on ${run.jobId} was taken over`);
    fault(FAULT_POINTS.INTERPRETER_BEFORE_DONE);
    await journal.runs.complete(lease);
    return end({ ...base, outcome: "done" });
  } catch (e) {
    if (e instanceof RunEnded) return end(e.outcome);
    if (isIdemError(e, "LEASE_LOST")) {
      return end({ ...base, outcome: "lease-lost", class: "infrastructure", error: e.message });
    }
    return end(await failRun(e));
  } finally {
    clearInterval(keeper);
  }

  /** Records a failure of the run: a retry after the backoff, or dead. */
  async function failRun(e: unknown): Promise<RunOutcome> {
    const cause = e instanceof EffectFailure ? e.error : e;
    let cls = classifyError(cause);
    // An unknown outcome on a kind the next attempt can probe or the target deduplicates is only
    // a transient failure: the retry finds out or is absorbed.
    if (cls === "uncertain") cls = "transient";
    const error = describeError(cause);
    try {
      if (isRetryableClass(cls) && run.attempts + 1 < settings.maxAttempts) {
        const nextAt = clock.now() + scheduledDelay(settings.backoffMs, run.attempts, 1000);
        await journal.runs.fail(lease, { class: cls, error, nextAt });
        return { ...base, outcome: "failed", class: cls, error };
      }
      const why = isRetryableClass(cls)
        ? `${error} (after ${run.attempts + 1} attempts, maxAttempts ${settings.maxAttempts})`
        : error;
      await journal.runs.markDead(lease, { class: cls, error: why });
      return { ...base, outcome: "dead", class: cls, error: why };
    } catch (inner) {
      if (isIdemError(inner, "LEASE_LOST")) {
        return { ...base, outcome: "lease-lost", class: "infrastructure", error: inner.message };
      }
      // The journal cannot take the failure either: leave the run to its lease expiry.
      rlog.error({ err: describeError(inner), cause: error }, "cannot record the run's failure");
      return { ...base, outcome: "failed", class: cls, error };
    }
  }

  async function interpretEffect(i: number, spec: EffectSpec): Promise<void> {
    const key = effectKey(run.jobId, i);
    const elog = rlog.child({ key, kind: spec.kind });
    const ledger = await journal.ledger.history(key);
    const current = ledger.find((r) => r.generation === run.generation);
    const supersededBy =
      spec.kind === "file.write" ? await writes.supersededBy(output.seq, spec) : undefined;
    const decision = decideEffect({
      spec,
      key,
      generation: run.generation,
      ledger,
      forceUnprobeable: run.forceUnprobeable,
      effects,
      supersededBy,
    });
    const intent = { key, idx: i, kind: spec.kind, specHash: contentHash(spec) };
    const attributes = {
      "idem.job_id": run.jobId,
      "idem.effect_key": key,
      "idem.effect.kind": spec.kind,
      "idem.effect.target": context.targetOf(spec),
      "idem.generation": run.generation,
    };
    /** A probe or an apply as a span under the claim, its outcome an attribute. */
    const traced =
      <T>(name: "idem.probe" | "idem.apply", op: () => Promise<T>, outcome: (r: T) => string) =>
      () =>
        context.tracing.inSpan(name, { parent: claimSpan, attributes }, async (span) => {
          const r = await op();
          span.setAttributes({ "idem.effect.outcome": outcome(r) });
          return r;
        });
    const applied = () => "applied";
    const settled = async (
      state: "applied" | "present" | "skipped",
      detail: Record<string, unknown>,
    ) => {
      await journal.ledger.settle(lease, key, state, detail);
      metrics.effects.inc({ kind: spec.kind, outcome: state });
      elog.info({ event: `effect.${state}`, detail }, "effect settled");
      fault(FAULT_POINTS.INTERPRETER_AFTER_EFFECT_RECORD);
    };

    switch (decision.action) {
      case "skip": {
        // Settled in this generation: nothing to write.
        if (current && isSettledEffect(current.state)) return;
        await journal.ledger.intend(lease, { ...intent, detail: { reason: decision.reason } });
        fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
        await settled("skipped", { reason: decision.reason });
        return;
      }
      case "uncertain": {
        if (current?.state !== "uncertain") {
          await journal.ledger.intend(lease, intent);
          await journal.ledger.settle(lease, key, "uncertain", { reason: decision.reason });
          metrics.effects.inc({ kind: spec.kind, outcome: "uncertain" });
        }
        elog.warn({ event: "effect.uncertain", reason: decision.reason }, "effect uncertain");
        await dead("uncertain", `${key}: ${decision.reason}`);
        return;
      }
      case "apply-unprobeable": {
        await journal.ledger.intend(lease, intent);
        fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
        const detail = await attempt(
          traced("idem.apply", () => effects.apply(spec, key), applied),
          spec,
        );
        fault(FAULT_POINTS.INTERPRETER_AFTER_APPLY);
        await settled("applied", detail);
        return;
      }
      case "probe": {
        let hint = hintOf(current);
        for (let moved = 0; ; moved++) {
          const probed = await attempt(
            traced(
              "idem.probe",
              () => effects.probe(spec, key, hint),
              (p) => p.status,
            ),
            spec,
          );
          if (probed.status === "present") {
            await journal.ledger.intend(lease, { ...intent, detail: probed.detail });
            fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
            await settled("present", probed.detail);
            return;
          }
          if (probed.status === "conflict") {
            await journal.ledger.intend(lease, intent);
            await journal.ledger.settle(lease, key, "failed", { reason: probed.reason });
            metrics.effects.inc({ kind: spec.kind, outcome: "conflict" });
            elog.warn({ event: "effect.failed", reason: probed.reason }, "effect conflicts");
            await dead("conflict", `${key}: ${probed.reason}`);
            return;
          }
          // Absent. The intent is written after the probe so it can carry the probed base: a crash
          // after this point finds it `intended` with the base and probes only base..branch. The
          // probe changed nothing, so the intent still precedes every change at the target, and
          // writing it re-checks the lease token just before the apply.
          await journal.ledger.intend(lease, { ...intent, detail: probed.detail });
          fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
          let detail: Record<string, unknown>;
          try {
            detail = await attempt(
              traced("idem.apply", () => effects.apply(spec, key, probed), applied),
              spec,
            );
          } catch (e) {
            if (
              e instanceof EffectFailure &&
              isIdemError(e.error, "TARGET_MOVED") &&
              moved < MOVED_RETRIES &&
              !lost
            ) {
              elog.info(
                { event: "effect.moved", attempt: moved + 1 },
                "target moved; probing again",
              );
              hint = hintOf({ detail: probed.detail }) ?? hint;
              continue;
            }
            throw e;
          }
          fault(FAULT_POINTS.INTERPRETER_AFTER_APPLY);
          await settled("applied", detail);
          return;
        }
      }
    }

    /** Runs a probe or apply; a target error becomes an EffectFailure, settled `uncertain` or `failed`. */
    async function attempt<T>(op: () => Promise<T>, s: EffectSpec): Promise<T> {
      try {
        return await op();
      } catch (e) {
        const unprobeable = !effects.probeable(s);
        const dedup = effects.targetDedup(s);
        const cls = classifyError(e);
        const error = describeError(e);
        if (cls === "uncertain" && unprobeable && !dedup) {
          await journal.ledger.settle(lease, key, "uncertain", { error });
          metrics.effects.inc({ kind: s.kind, outcome: "uncertain" });
          elog.warn({ event: "effect.uncertain", err: error }, "effect outcome unknown");
          await dead("uncertain", `${key}: ${error}`);
        }
        // Only an error that reached the target before the intent (a probe) leaves no row to settle.
        const row = (await journal.ledger.forJob(run.jobId, run.generation)).find(
          (r) => r.key === key,
        );
        if (row?.state === "intended") {
          await journal.ledger.settle(lease, key, "failed", { error, class: cls });
        }
        metrics.effects.inc({ kind: s.kind, outcome: "error" });
        elog.warn({ event: "effect.error", class: cls, err: error }, "effect failed");
        throw new EffectFailure(e, unprobeable, dedup);
      }
    }
  }
}

/** The bounded-probe hint stored with an unfinished intent (the git base it probed), if any. */
function hintOf(r: Pick<EffectRecord, "detail"> | undefined): ProbeHint | undefined {
  const b = r?.detail?.base;
  return typeof b === "string" ? { base: b } : undefined;
}
