import { describeEffect, type Effects } from "@idem/effects";
import {
  isActiveRun,
  type JournalStore,
  type LedgerEntry,
  type OutputRecord,
  type ReplaySelection,
} from "@idem/journal";
import { type Config, describeError, type EffectSpec, effectKey, IdemError } from "@idem/schema";
import { decideEffect } from "../decide/decide-effect.js";
import { SupersedeIndex } from "../decide/supersede-index.js";
import { type EffectFilter, effectInFilter, targetsInFilter } from "./effect-filter.js";
import {
  type BatchOutcome,
  BatchWarmUp,
  type ProbeItem,
  probe,
  targetNames,
} from "./plan-probes.js";

/** What a replay's interpreter will do with one effect: the rows of `idem replay --dry-run`. */
export type PlanAction = "apply" | "skip" | "conflict" | "uncertain";
/** Every plan action, in the order of the plan's summary. */
export const PLAN_ACTIONS: readonly PlanAction[] = ["apply", "skip", "conflict", "uncertain"];

/** One effect of one selected output in a replay plan, and why it gets its action. */
export interface PlanEntry {
  key: string;
  jobId: string;
  kind: EffectSpec["kind"];
  action: PlanAction;
  reason: string;
  /** The generation the replay would create for this output. */
  generation: number;
}

/**
 * An effect of a selected output outside the replay's filter: the new generation neither decides,
 * probes nor applies it, and writes no ledger row for it; it stays as its latest generation left it.
 */
export interface KeptEntry {
  key: string;
  jobId: string;
  kind: EffectSpec["kind"];
  /** Its latest ledger state (`applied`, `present`, ...), or null when no generation wrote it. */
  state: string | null;
  /** The generation of that state, or null. */
  stateGeneration: number | null;
  reason: string;
}

/** The plan of a replay: what each effect would do, which outputs get a new generation, which are busy. */
export interface ReplayPlan {
  /** The effects the new generations take (those in the filter), in recording order. */
  plan: PlanEntry[];
  summary: Record<PlanAction, number>;
  /** Outputs the replay creates a new generation for, in recording order. */
  jobIds: string[];
  /** Selected outputs whose latest run is still pending, running or waiting for a retry: left alone. */
  busy: string[];
  /** The operator's selection of outputs, recorded in each new generation's lineage. */
  selection: ReplaySelection;
  /** The effect filter (checked, see `checkEffectFilter`); null: every effect. */
  only: EffectFilter | null;
  /** Effects of the replayed outputs outside the filter, left as they were (empty without one). */
  kept: KeptEntry[];
  /**
   * With a filter: selected outputs whose latest run is dead, left alone. Their effects outside the
   * filter may be open (uncertain, failed) or never reached, and a filtered run that ends done
   * would hide them; replay them without a filter, or settle them first (`idem dlq resolve`).
   */
  dead: string[];
  /** Selected, not busy outputs with no effect in the filter: no new generation for them. */
  untouched: string[];
  /**
   * With a filter: the ordering targets of each new generation by job ID, those of the effects it
   * takes only (a webhook replay does not wait behind, nor hold up, the output's repository).
   */
  runTargets: Record<string, string[]>;
}

/** Outputs read, or decided, between two looks at the event loop (so early git processes move on). */
const PAGE = 250;
const NO_LEDGER: readonly LedgerEntry[] = [];

/** The probe items of one target, in recording order, and the plan rows they answer. */
type ProbeGroup = { items: ProbeItem[]; entries: PlanEntry[] };

/**
 * The plan of a replay: for every effect of every selected output, what the new generation's
 * interpreter will do with it, from the interpreter's own decision (`decideEffect`) and one batch
 * probe per target. The probe simulates the plan's earlier applies on a scratch copy of each target,
 * so a lost chain of dependent patches shows `apply`, not `conflict`. Changes nothing: it only
 * reads the journal and probes.
 *
 * Most of a large plan's time is git's: the history scan of a branch whose key refs cannot be
 * trusted (a restore, a reset) is one `git log` of the whole branch. So the outputs are read a page
 * at a time, and the first git effect of each target met starts a one-item probe of that target at
 * once: its git processes start, and its scan (which the façade keeps per branch head) runs in git
 * while this process reads the journal and decides. The plan's own batch probes come after and
 * find the scan done. The warm-up's answers are thrown away: the plan is the same without it.
 *
 * A probe that fails, or a decision that throws, makes its rows `conflict` with the reason: the
 * plan itself only throws when the journal cannot be read (that error propagates), or NOT_FOUND
 * when `selection.jobIds` names a job with no output (its `details.jobIds` lists them).
 *
 * With `only` (a replay by kind or target), the effects outside the filter are neither decided nor
 * probed: they are listed in `kept` with the state their latest generation left them in; an output
 * with no effect inside gets no generation (`untouched`), and one whose latest run is dead is left
 * alone (`dead`), since a filtered run that ends done would hide its open or unreached effects.
 */
export async function buildReplayPlan(options: {
  config: Config;
  journal: JournalStore;
  effects: Effects;
  selection: ReplaySelection;
  forceUnprobeable: boolean;
  /**
   * Only these effects (check it first with `checkEffectFilter`: an unknown name only matches
   * nothing here); absent or null: every effect.
   */
  only?: EffectFilter | null;
}): Promise<ReplayPlan> {
  const { config, journal, effects } = options;
  const only = options.only ?? null;
  const targetOf = targetNames(config, effects);
  const warm = new BatchWarmUp(effects, only);
  try {
    // Only the parts of each output the plan reads are kept (not its record, body or hash): what
    // a plan keeps is copied by every young-generation collection until it ends.
    const ids: string[] = [];
    const seqs: number[] = [];
    const recordedAts: number[] = [];
    const effectsOf: EffectSpec[][] = [];
    for (let afterSeq = 0; ; ) {
      const page = await journal.outputs.page(options.selection, { afterSeq, limit: PAGE });
      for (const o of page) {
        ids.push(o.jobId);
        seqs.push(o.seq);
        recordedAts.push(o.recordedAt);
        effectsOf.push(o.output.effects);
        warm.meet(o);
      }
      if (page.length < PAGE) break;
      afterSeq = (page[page.length - 1] as OutputRecord).seq;
      await nextTurn();
    }
    const unknown = missingJobs(options.selection, ids);
    // A named job whose output row is damaged is not "not recorded": get() says so (INTEGRITY).
    for (const jobId of unknown.slice(0, 10)) await journal.outputs.get(jobId);
    if (unknown.length > 0) {
      throw new IdemError(
        "NOT_FOUND",
        `no output recorded for ${unknown.length === 1 ? "job" : "jobs"} ${unknown.slice(0, 10).join(", ")}${unknown.length > 10 ? ", ..." : ""}: nothing to replay (idem jobs lists the jobs still waiting for one)`,
        { details: { jobIds: unknown } },
      );
    }
    const latestRuns = await journal.runs.latestOf(ids);
    await nextTurn();
    const ledgers = await journal.ledger.ofJobs(ids);
    const superseding = new SupersedeIndex(journal, effects.kinds);
    const plan: PlanEntry[] = [];
    const jobIds: string[] = [];
    const busy: string[] = [];
    const dead: string[] = [];
    const kept: KeptEntry[] = [];
    const untouched: string[] = [];
    const runTargets: Record<string, string[]> = {};
    /** Probe groups per target. */
    const groups = new Map<string, ProbeGroup>();

    for (let n = 0; n < ids.length; n++) {
      if (n % PAGE === PAGE - 1) await nextTurn();
      const jobId = ids[n] as string;
      const latest = latestRuns.get(jobId);
      if (latest && isActiveRun(latest.state)) {
        busy.push(jobId);
        continue;
      }
      if (only && latest && latest.state !== "done") {
        dead.push(jobId);
        continue;
      }
      const specs = effectsOf[n] as EffectSpec[];
      if (only && !specs.some((spec) => effectInFilter(spec, only, effects.kinds))) {
        untouched.push(jobId);
        continue;
      }
      jobIds.push(jobId);
      if (only) runTargets[jobId] = targetsInFilter(specs, only, config, effects.kinds);
      const generation = (latest?.generation ?? 0) + 1;
      for (let i = 0; i < specs.length; i++) {
        const spec = specs[i] as EffectSpec;
        const key = effectKey(jobId, i);
        if (only && !effectInFilter(spec, only, effects.kinds)) {
          kept.push(keptEntry(jobId, key, spec, ledgers.get(key) ?? NO_LEDGER));
          continue;
        }
        const entry: PlanEntry = {
          key,
          jobId,
          kind: spec.kind,
          action: "skip",
          reason: "",
          generation,
        };
        plan.push(entry);
        // An effect a later recorded output supersedes (a file.write of the same path) is skipped,
        // as the interpreter does.
        const supersededBy = await superseding.supersededBy(seqs[n] as number, spec);
        let decision: ReturnType<typeof decideEffect>;
        try {
          decision = decideEffect({
            spec,
            key,
            generation,
            ledger: ledgers.get(key) ?? NO_LEDGER,
            forceUnprobeable: options.forceUnprobeable,
            effects,
            supersededBy,
            subject: describeEffect(spec, effects.kinds),
          });
        } catch (e) {
          entry.action = "conflict";
          entry.reason = describeError(e);
          continue;
        }
        switch (decision.action) {
          case "skip":
            entry.reason = decision.reason;
            break;
          case "uncertain":
            entry.action = "uncertain";
            entry.reason = `${decision.reason}; resolve it with idem dlq resolve ${jobId} --applied|--skipped --reason R`;
            break;
          case "apply-unprobeable":
            entry.action = "apply";
            entry.reason = effects.targetDedup(spec)
              ? "cannot be probed: sent again under its key, the target drops a repeat"
              : "cannot be probed: sent (forced with --force-unprobeable)";
            break;
          case "probe": {
            const target = targetOf(spec) ?? `${spec.kind}:${i}:${jobId}`;
            let g = groups.get(target);
            if (!g) {
              g = { items: [], entries: [] };
              groups.set(target, g);
            }
            g.items.push({ spec, key, since: recordedAts[n] as number });
            g.entries.push(entry);
            break;
          }
        }
      }
    }

    await warm.done(); // never a plan probe beside a warm-up on the same target
    for (const [target, g] of groups) settleGroup(target, g, await probe(effects, g.items));

    const summary = { apply: 0, skip: 0, conflict: 0, uncertain: 0 };
    for (const e of plan) summary[e.action] += 1;
    const selection = options.selection;
    return { plan, summary, jobIds, busy, selection, only, kept, dead, untouched, runTargets };
  } finally {
    await warm.done();
  }
}

/** The plan rows of a target from its batch probe. */
function settleGroup(target: string, group: ProbeGroup, outcome: BatchOutcome): void {
  const { items, entries } = group;
  if ("error" in outcome) {
    const reason = `cannot probe ${target}: ${describeError(outcome.error)}`;
    for (const entry of entries) {
      entry.action = "conflict";
      entry.reason = reason;
    }
    return;
  }
  for (let n = 0; n < entries.length; n++) {
    const entry = entries[n] as PlanEntry;
    const r = outcome.results.get((items[n] as ProbeItem).key);
    if (!r) {
      entry.action = "conflict";
      entry.reason = "the probe gave no answer";
    } else if (r.status === "present") {
      entry.action = "skip";
      entry.reason = `present at ${target}${presentDetail(r.detail)}`;
    } else if (r.status === "absent") {
      entry.action = "apply";
      entry.reason = `absent at ${target}`;
    } else {
      entry.action = "conflict";
      entry.reason = r.reason;
    }
  }
}

/** An effect outside the filter, with the state its latest generation left it in. */
function keptEntry(
  jobId: string,
  key: string,
  spec: EffectSpec,
  ledger: readonly LedgerEntry[],
): KeptEntry {
  let last: LedgerEntry | undefined;
  for (const r of ledger) if (!last || r.generation > last.generation) last = r;
  return {
    key,
    jobId,
    kind: spec.kind,
    state: last?.state ?? null,
    stateGeneration: last?.generation ?? null,
    reason: last
      ? `outside the filter: left ${last.state} as generation ${last.generation} left it`
      : "outside the filter: left as it is (no generation recorded it)",
  };
}

/** Lets I/O callbacks run (the early probes' git processes), then goes on. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function presentDetail(detail: Record<string, unknown>): string {
  if (typeof detail.commit === "string") return ` (commit ${detail.commit.slice(0, 12)})`;
  if (detail.reversed === true) return " (its change is already in the tree)";
  if (detail.simulated === true) return " (an earlier step of this plan writes the same bytes)";
  return "";
}

/** The job IDs a `--job` selection names that have no output (`found`: the outputs it selected). */
function missingJobs(selection: ReplaySelection, found: readonly string[]): string[] {
  if (!selection.jobIds) return [];
  const have = new Set(found);
  return [...new Set(selection.jobIds)].filter((id) => !have.has(id));
}
