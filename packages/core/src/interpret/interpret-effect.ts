import { describeEffect, type ProbeHint } from "@idem/effects";
import { type Claim, type EffectRecord, isSettledEffect, type Lease } from "@idem/journal";
import type { Logger, TraceSpan } from "@idem/runtime";
import {
  classifyError,
  contentHash,
  describeError,
  type EffectSpec,
  effectKey,
  FAULT_POINTS,
  type FailureClass,
  isIdemError,
} from "@idem/schema";
import { decideEffect } from "../decide/decide-effect.js";
import type { InterpretRunContext, RunOutcome } from "./run-context.js";
import type { EffectTurn } from "./target-turns.js";

/** How many times an apply that lost a compare-and-swap (TARGET_MOVED) is re-probed at once before the run fails. */
const MOVED_RETRIES = 3;

/** Why a run stops early: the outcome is already decided and written. */
export class RunEnded extends Error {
  override readonly name = "RunEnded";
  constructor(readonly outcome: RunOutcome) {
    super(outcome.outcome);
  }
}

/** An error raised by the target (probe or apply), as opposed to the journal. */
export class EffectFailure extends Error {
  override readonly name = "EffectFailure";
  constructor(
    readonly error: unknown,
    readonly unprobeable: boolean,
    readonly dedup: boolean,
  ) {
    super(describeError(error), { cause: error });
  }
}

/** One claimed run as its effects see it. */
export interface RunScope {
  context: InterpretRunContext;
  claim: Claim;
  lease: Lease;
  /** The run's logger (job and generation). */
  rlog: Logger;
  /** The run's claim span, the parent of each probe and apply span. */
  claimSpan: TraceSpan;
  /** True once another holder took the run over. */
  lost(): boolean;
  /** Ends the run as dead (written), then throws RunEnded. */
  dead(cls: FailureClass, error: string): Promise<never>;
}

/** Per claim: its ledger history by key, and the keys read from it already. */
const claimed = new WeakMap<Claim, { byKey: Map<string, EffectRecord[]>; read: Set<string> }>();

/**
 * `key`'s ledger history as the claim read it (`Claim.history`), the first time only: until the
 * run writes its own row of `key` (in this effect's turn, after this read) the claim's is what
 * `ledger.history(key)` would answer; any later read asks the journal. Undefined without one.
 */
export function claimedHistory(claim: Claim, key: string): EffectRecord[] | undefined {
  if (claim.history === undefined) return undefined;
  let seen = claimed.get(claim);
  if (!seen) {
    const byKey = new Map<string, EffectRecord[]>();
    for (const r of claim.history) {
      const rows = byKey.get(r.key);
      if (rows) rows.push(r);
      else byKey.set(r.key, [r]);
    }
    seen = { byKey, read: new Set() };
    claimed.set(claim, seen);
  }
  if (seen.read.has(key)) return undefined;
  seen.read.add(key);
  return seen.byKey.get(key) ?? [];
}

/**
 * Decides, probes, applies and settles effect `i` of the run (see `interpretRun`), with the fault
 * points between the steps; `turn` keeps its apply behind another run's on the same target, and
 * a probe that finds a conflict while an earlier run's apply is still queued there waits for it
 * to land and probes again (a patch may need the commit queued before it).
 * @throws RunEnded when the effect ends the run (dead); EffectFailure for a target's error;
 * ORDER_BLOCKED when the apply it follows failed (nothing changed, the intent stays); the journal's
 * errors (LEASE_LOST).
 */
export async function interpretEffect(
  scope: RunScope,
  i: number,
  spec: EffectSpec,
  turn: EffectTurn | undefined,
): Promise<void> {
  const order = turn?.order;
  const { context, claim, lease, rlog, claimSpan, dead } = scope;
  const { journal, effects, metrics, supersede, fault } = context;
  const { run, output } = claim;
  const key = effectKey(run.jobId, i);
  const elog = rlog.child({ key, kind: spec.kind });
  const ledger = claimedHistory(claim, key) ?? (await journal.ledger.history(key));
  const current = ledger.find((r) => r.generation === run.generation);
  const supersededBy = await supersede.supersededBy(output.seq, spec);
  // idem never applied an effect before its output was recorded: a kind that lists its target's
  // recent items starts there.
  const since = output.recordedAt;
  const decision = decideEffect({
    spec,
    key,
    generation: run.generation,
    ledger,
    forceUnprobeable: run.forceUnprobeable,
    effects,
    supersededBy,
    subject: describeEffect(spec, effects.kinds),
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
  /**
   * Records the effect settled. `probed`: the effect was probed in this run (a probeable kind), so
   * the settle is written `soon` (docs/reliability.md, "What is durable when"): committed now,
   * carried to disk by the next durable write. A power loss that takes it leaves the effect
   * `intended` as a crash at `interpreter.after-apply` does, and the next holder probes it again.
   * Any other settle (an unprobeable kind: its next holder could not tell) is durable first.
   */
  const settled = async (
    state: "applied" | "present" | "skipped",
    detail: Record<string, unknown>,
    probed = false,
  ) => {
    await journal.ledger.settle(lease, key, state, detail, { soon: probed });
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
      await turn?.take();
      const detail = await attempt(
        traced("idem.apply", () => effects.apply(spec, key, { order, since }), applied),
        spec,
      );
      fault(FAULT_POINTS.INTERPRETER_AFTER_APPLY);
      await settled("applied", detail);
      return;
    }
    case "probe": {
      let hint = hintOf(current);
      let waitedLanded = false;
      for (let moved = 0; ; moved++) {
        const probed = await attempt(
          traced(
            "idem.probe",
            () => effects.probe(spec, key, { hint, since }),
            (p) => p.status,
          ),
          spec,
        );
        if (probed.status === "present") {
          await journal.ledger.intend(lease, { ...intent, detail: probed.detail });
          fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
          await settled("present", probed.detail, true);
          return;
        }
        // What the earlier runs of the pipeline queued on the target may be what makes it apply.
        if (probed.status === "conflict" && turn && !waitedLanded) {
          await turn.landed();
          waitedLanded = true;
          moved--;
          continue;
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
        // writing it re-checks the lease token just before the apply. It is durable (on disk)
        // before it is answered, so before the apply: a power loss never leaves an applied
        // effect without its intent.
        await journal.ledger.intend(lease, { ...intent, detail: probed.detail });
        fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
        // Probed ahead of its turn (a queued target): the apply waits for it.
        await turn?.take();
        let detail: Record<string, unknown>;
        try {
          detail = await attempt(
            traced("idem.apply", () => effects.apply(spec, key, { probed, order, since }), applied),
            spec,
          );
        } catch (e) {
          turn?.reopen();
          if (
            e instanceof EffectFailure &&
            isIdemError(e.error, "TARGET_MOVED") &&
            moved < MOVED_RETRIES &&
            !scope.lost()
          ) {
            elog.info({ event: "effect.moved", attempt: moved + 1 }, "target moved; probing again");
            hint = probed.detail;
            continue;
          }
          throw e;
        }
        fault(FAULT_POINTS.INTERPRETER_AFTER_APPLY);
        await settled("applied", detail, true);
        return;
      }
    }
  }

  /** Runs a probe or apply; a target error becomes an EffectFailure, settled `uncertain` or `failed`. */
  async function attempt<T>(op: () => Promise<T>, s: EffectSpec): Promise<T> {
    try {
      return await op();
    } catch (e) {
      // Nothing changed at the target: the intent stays, as after a crash, for the next holder.
      if (isIdemError(e, "ORDER_BLOCKED")) throw e;
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

/**
 * What an earlier probe stored with an unfinished intent (its `absent` detail), handed back to the
 * kind as its hint: the kind's own, read by the kind alone.
 */
function hintOf(r: Pick<EffectRecord, "detail"> | undefined): ProbeHint | undefined {
  const d = r?.detail;
  return d && typeof d === "object" && !Array.isArray(d) ? d : undefined;
}
