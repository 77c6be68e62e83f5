import { recordedSpecsProblem } from "@idem/effects";
import { type Claim, damageMessage } from "@idem/journal";
import {
  classifyError,
  describeError,
  type EffectSpec,
  FAULT_POINTS,
  type FailureClass,
  IdemError,
  isIdemError,
  isRetryableClass,
  scheduledDelay,
} from "@idem/schema";
import { type RunGate, runGate } from "../approvals/approval-gate.js";
import { effectInFilter } from "../replay/effect-filter.js";
import { EffectFailure, interpretEffect, RunEnded, type RunScope } from "./interpret-effect.js";
import type { InterpretRunContext, RunOutcome } from "./run-context.js";
import type { EffectTurn, RunTurn } from "./target-turns.js";

/** The longest a run waits for a target's Retry-After: a rate limit resets within the hour. */
const RETRY_AFTER_MAX_MS = 6 * 3_600_000;

/** The wait a failure carries (`details.retryAfterMs`, set by a kind's `fail.transient`), if any. */
function retryAfterOf(e: unknown): number | undefined {
  const ms = isIdemError(e) ? e.details?.retryAfterMs : undefined;
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/**
 * Interprets one claimed run: decides, probes, applies and settles each effect of its output in
 * order (only those in the run's filter, `run.only`, for a replay by kind or target), with the
 * fault points of docs/reliability.md between the steps, and ends the run (done, a retry after
 * `interpreter.backoffMs`, dead, or released when `stopSignal` aborted).
 *
 * In a pipeline (`context.turns`), each effect on an ordering target waits for its turn there
 * behind the earlier runs the interpreter holds (on a queued target, after its probe and intent),
 * and the run's last effect on a target hands it over as soon as its apply is queued. A run whose
 * turn or queued apply is blocked by an earlier one is released (ORDER_BLOCKED): nothing of it was
 * applied out of order.
 *
 * Crash safety: an intent is written before every apply, an effect found `intended` after a crash
 * is probed again, the kind given what its earlier probe stored with the intent (its hint: git
 * looks only above the head it probed), and an apply acts from what was probed (git moves the
 * branch by compare-and-swap from the probed head), so a kill at any instant, a
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
  const { journal, effects, settings, clock, fault, metrics, stopSignal } = context;
  const { run, output } = claim;
  const lease = claim.lease;
  const ids = { jobId: run.jobId, generation: run.generation };
  /** This claim of the run, as the pipeline's order knows it. */
  const holder = { id: run.id, token: lease.token };
  const rlog = context.log.child(ids);
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
    throw new RunEnded({ ...ids, outcome: "dead", class: cls, error });
  };

  const scope: RunScope = { context, claim, lease, rlog, claimSpan, dead, lost: () => lost };
  const { turns } = context;
  const specs = output.output.effects;
  // A spec its kind's schema refuses was damaged in the journal (class integrity) or recorded
  // before a check that refuses it now (validation): the run ends dead, nothing read from it
  // (docs/runbook.md, "A damaged output").
  const damage = recordedSpecsProblem(specs, effects.kinds);
  // A replay's filter (on the run record, so any host honours it): the rest is left as it was.
  const taken =
    damage !== undefined
      ? []
      : specs.flatMap((spec, i) => (effectInFilter(spec, run.only, effects.kinds) ? [i] : []));
  /** The last effect of the run on each ordering target: the target is handed over after it. */
  const lastOn = new Map<string, number>();
  for (const i of taken) {
    const t = context.targetOf(specs[i] as EffectSpec);
    if (t !== undefined) lastOn.set(t, i);
  }
  /** The run's turn on each target it acts on (pipeline). */
  const heldTurns = new Map<string, RunTurn>([...lastOn.keys()].map((t) => [t, { taken: false }]));
  /** The approval gate (docs/approvals.md): effects a rule names wait for a person's decision. */
  const gate =
    context.approvals && damage === undefined
      ? runGate({
          journal,
          kinds: effects.kinds,
          settings: context.approvals,
          run: ids,
          output: { agent: output.agent, contentHash: output.contentHash, specs },
          indexes: taken,
          now: () => clock.now(),
        })
      : undefined;
  let finished = false;
  try {
    if (damage?.class === "integrity")
      await dead("integrity", damageMessage({ jobId: run.jobId, problem: damage.problem }));
    if (damage !== undefined)
      await dead(
        "validation",
        `the recorded output of job ${run.jobId} holds an effect its kind refuses: ${damage.problem}; it can never be applied, and nothing of it is. See docs/runbook.md, "A damaged output"`,
      );
    for (const i of taken) {
      if (lost) throw new IdemError("LEASE_LOST", `lease on ${run.jobId} was taken over`);
      if (stopSignal.aborted) return end(await released());
      // Before its first effect that needs a person and has no approval: the run waits, its
      // lease given up (the effects before it are settled).
      if (gate && !(await gate.passes(i))) return end(await awaitApproval(gate, i));
      const spec = specs[i] as EffectSpec;
      const target = context.targetOf(spec);
      let turn: EffectTurn | undefined;
      if (turns && target !== undefined) {
        const held = heldTurns.get(target) as RunTurn;
        const where = { last: lastOn.get(target) === i, early: effects.queuedApplies(spec) };
        turn = turns.effectTurn(holder, target, held, where, stopSignal);
        if (!turn.early) await turn.take();
      }
      await interpretEffect(scope, i, spec, turn);
      if (turns && target !== undefined && lastOn.get(target) === i) turns.handOver(holder, target);
    }
    if (lost) throw new IdemError("LEASE_LOST", `lease on ${run.jobId} was taken over`);
    fault(FAULT_POINTS.INTERPRETER_BEFORE_DONE);
    // Durable soon, not now (docs/reliability.md, "What is durable when"): a power loss that takes
    // it leaves the run as a crash at interpreter.before-done does; the next durable write (the
    // next run's intent) carries it to disk.
    await journal.runs.complete(lease, { soon: true });
    finished = true;
    return end({ ...ids, outcome: "done" });
  } catch (e) {
    if (e instanceof RunEnded) {
      finished = e.outcome.outcome === "dead";
      return end(e.outcome);
    }
    if (isIdemError(e, "LEASE_LOST")) {
      return end({ ...ids, outcome: "lease-lost", class: "infrastructure", error: e.message });
    }
    // An earlier run of this interpreter on a target did not get there first: nothing was applied
    // out of order; the run goes back to the journal, which keeps it behind that one.
    if (isIdemError(e, "ORDER_BLOCKED")) {
      try {
        return end(await released(e.message));
      } catch (inner) {
        return end(await failRun(inner));
      }
    }
    const outcome = await failRun(e);
    finished = outcome.outcome === "dead";
    return end(outcome);
  } finally {
    clearInterval(keeper);
    turns?.leave(holder, finished);
  }

  /**
   * Parks the run awaiting a decision on the gated effects from `i` on that no approval covers,
   * bound to the output's digest; expires after `approvals.expiryMs`.
   */
  async function awaitApproval(g: RunGate, i: number): Promise<RunOutcome> {
    const asked = await g.pending(i);
    const rules = [...new Set(asked.flatMap((j) => g.reasons(j)))];
    const expiresAt = clock.now() + (context.approvals?.expiryMs ?? 0);
    fault(FAULT_POINTS.INTERPRETER_BEFORE_AWAIT);
    await journal.approvals.request(lease, {
      digest: output.contentHash,
      effects: asked,
      rules,
      expiresAt,
    });
    claimSpan.setAttributes({
      "idem.approval.effects": asked.join(","),
      "idem.approval.rules": rules.join(", "),
    });
    return { ...ids, outcome: "awaiting" };
  }

  /** Gives the run back (pending again, no attempt counted): on stop, or when order blocks it. */
  async function released(error?: string): Promise<RunOutcome> {
    try {
      await journal.runs.release(lease);
    } catch (e) {
      if (!isIdemError(e, "LEASE_LOST")) throw e;
      return { ...ids, outcome: "lease-lost", class: "infrastructure", error: e.message };
    }
    return { ...ids, outcome: "released", ...(error === undefined ? {} : { error }) };
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
        // A target that said when to come back (a rate limit's Retry-After or reset) is asked
        // again no sooner than that (at most RETRY_AFTER_MAX_MS later).
        const nextAt =
          clock.now() +
          Math.max(
            scheduledDelay(settings.backoffMs, run.attempts, 1000),
            Math.min(retryAfterOf(cause) ?? 0, RETRY_AFTER_MAX_MS),
          );
        await journal.runs.fail(lease, { class: cls, error, nextAt });
        return { ...ids, outcome: "failed", class: cls, error };
      }
      const why = isRetryableClass(cls)
        ? `${error} (after ${run.attempts + 1} attempts, maxAttempts ${settings.maxAttempts})`
        : error;
      await journal.runs.markDead(lease, { class: cls, error: why });
      return { ...ids, outcome: "dead", class: cls, error: why };
    } catch (inner) {
      if (isIdemError(inner, "LEASE_LOST")) {
        return { ...ids, outcome: "lease-lost", class: "infrastructure", error: inner.message };
      }
      // The journal cannot take the failure either: leave the run to its lease expiry.
      rlog.error({ err: describeError(inner), cause: error }, "cannot record the run's failure");
      return { ...ids, outcome: "failed", class: cls, error };
    }
  }
}
