import type { Effects } from "@idem/effects";
import {
  type EffectRecord,
  type JournalStore,
  RESOLVABLE_EFFECT_STATES,
  type RunRecord,
  type RunState,
} from "@idem/journal";
import { describeError, IdemError } from "@idem/schema";

/** A human's decision on an uncertain effect, as recorded, and the run's state after it. */
export interface UncertainResolution {
  /** The effect as settled: `applied`, `present` (an `--applied` the probe confirmed) or `skipped`. */
  effect: EffectRecord;
  /** The state of the output's latest run after the decision (pending again: it goes on with the rest). */
  run: RunState | undefined;
}

/** What the open effect of a dead run failed on, as far as the decision goes. */
type OpenFailure = "uncertain" | "conflict" | "integrity" | "other";

/** Why the effect is open: its ledger detail first, then its run's class. */
function failureOf(effect: EffectRecord, run: RunRecord): { kind: OpenFailure; why: string } {
  const d = effect.detail ?? {};
  const error = typeof d.error === "string" ? d.error : undefined;
  const reason = typeof d.reason === "string" ? d.reason : undefined;
  const why = error ?? reason ?? run.lastError ?? "no error recorded";
  if (effect.state === "uncertain") return { kind: "uncertain", why };
  if (error?.startsWith("INTEGRITY") || run.lastError?.includes("INTEGRITY"))
    return { kind: "integrity", why };
  if (d.class === "conflict" || (reason !== undefined && error === undefined))
    return { kind: "conflict", why };
  if (effect.state === "failed" && d.class === undefined && run.class === "conflict")
    return { kind: "conflict", why };
  return { kind: "other", why };
}

/**
 * `idem dlq resolve JOB`: a person's decision on the open effect of a dead run (uncertain, else
 * failed, else intended), recorded with the reason and actor as an event; the run returns to
 * pending so an interpreter goes on with the rest. Not repeatable: once settled the effect is no
 * longer open.
 *
 * `skipped` settles it as skipped (it did not happen and must not be sent): the audit then does
 * not expect it at its target. `applied` is honest: for a kind the target can answer (git, file,
 * http with probeUrl; pass `effects`), the probe decides, and an effect it finds present is
 * recorded as `present`, never as `applied`; one it does not find is refused. Without a probe (an
 * unprobeable kind, or no `effects`), `applied` is the person's word for an uncertain or retried
 * effect, but is refused for one that failed on a conflict or an integrity error, which cannot
 * have happened as written.
 * @throws INVALID_INPUT without a reason; NOT_FOUND when the job has no run; INVALID_STATE when
 * its latest run is not dead, has no open effect, or `applied` is refused (the message names the
 * effect, its kind and why).
 */
export async function resolveUncertain(
  journal: JournalStore,
  jobId: string,
  decision: { decision: "applied" | "skipped"; reason: string; actor: string },
  effects?: Pick<Effects, "probe" | "probeable">,
): Promise<UncertainResolution> {
  const settle = async (as: "applied" | "present" | "skipped", key?: string) => {
    const effect = await journal.ledger.resolve(jobId, {
      decision: as,
      reason: decision.reason,
      actor: decision.actor,
      ...(key !== undefined && { expectKey: key }),
    });
    return { effect, run: (await journal.runs.latest(jobId))?.state };
  };
  if (decision.decision === "skipped") return settle("skipped");
  const run = await journal.runs.latest(jobId);
  const output = await journal.outputs.get(jobId);
  // Nothing open (no run, not dead, nothing to resolve): the journal says which, as before.
  if (run?.state !== "dead" || !output) return settle("applied");
  const ledger = await journal.ledger.forJob(jobId, run.generation);
  let open: EffectRecord | undefined;
  for (const state of RESOLVABLE_EFFECT_STATES) {
    open = ledger.find((e) => e.state === state);
    if (open) break;
  }
  const spec = open ? output.output.effects[open.idx] : undefined;
  if (!open || !spec) return settle("applied");
  const failure = failureOf(open, run);
  const refuse = (finding: string): never => {
    throw new IdemError(
      "INVALID_STATE",
      `cannot settle ${open.key} (${spec.kind}) as applied: ${finding}; its failure: ${failure.why}. Fix the target and run idem dlq retry ${jobId}, or settle it with --skipped`,
      { details: { key: open.key, kind: spec.kind, failure: failure.kind } },
    );
  };
  if (effects?.probeable(spec)) {
    let status: string;
    try {
      const probed = await effects.probe(spec, open.key);
      if (probed.status === "present") return settle("present", open.key);
      status = probed.status === "conflict" ? `conflict (${probed.reason})` : probed.status;
    } catch (e) {
      status = `unanswered (${describeError(e)})`;
    }
    return refuse(`the probe finds it ${status} at its target, not present`);
  }
  if (failure.kind === "conflict" || failure.kind === "integrity")
    return refuse(
      `it failed on ${failure.kind === "conflict" ? "a conflict" : "an integrity error"} and no probe can show it present`,
    );
  return settle("applied", open.key);
}
