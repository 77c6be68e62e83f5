import type { Effects, ProbeResult } from "@idem/effects";
import { decideEffect, FileWriteIndex } from "@idem/interpreter";
import type { JournalStore, OutputRecord, ReplaySelection } from "@idem/journal";
import { type Config, describeError, type EffectSpec, effectKey, effectTarget } from "@idem/schema";
import { readLedgers } from "./ledger-reader.js";

export type PlanAction = "apply" | "skip" | "conflict" | "uncertain";
export const PLAN_ACTIONS: readonly PlanAction[] = ["apply", "skip", "conflict", "uncertain"];

export interface PlanEntry {
  key: string;
  jobId: string;
  kind: EffectSpec["kind"];
  action: PlanAction;
  reason: string;
  /** The generation the replay would create for this output. */
  generation: number;
}

export interface ReplayPlan {
  plan: PlanEntry[];
  summary: Record<PlanAction, number>;
  /** Outputs the replay creates a new generation for, in recording order. */
  jobIds: string[];
  /** Selected outputs whose latest run is still pending, running or waiting for a retry: left alone. */
  busy: string[];
}

const ACTIVE = new Set(["pending", "running", "failed"]);

/**
 * The plan of a replay: for every effect of every selected output, what the new generation's
 * interpreter will do with it, from the interpreter's own decision (`decideEffect`) and one batch
 * probe per target. The probe simulates the plan's earlier applies on a scratch copy of each target,
 * so a lost chain of dependent patches shows `apply`, not `conflict`. Changes nothing: it only
 * reads the journal and probes.
 */
export async function buildReplayPlan(options: {
  config: Config;
  journal: JournalStore;
  effects: Effects;
  selection: ReplaySelection;
  forceUnprobeable: boolean;
}): Promise<ReplayPlan> {
  const { config, journal, effects } = options;
  const outputs = await journal.select(options.selection);
  const files = new FileWriteIndex(journal);
  const plan: PlanEntry[] = [];
  const jobIds: string[] = [];
  const busy: string[] = [];
  /** Probe groups per target, items in recording order, with the plan rows they answer. */
  const groups = new Map<string, { spec: EffectSpec; key: string; entry: PlanEntry }[]>();

  const ledgers = await readLedgers(
    journal,
    outputs.map((o) => o.jobId),
  );
  for (const o of outputs) {
    const latest = ledgers.latest(o.jobId);
    if (latest && ACTIVE.has(latest.state)) {
      busy.push(o.jobId);
      continue;
    }
    jobIds.push(o.jobId);
    const generation = (latest?.generation ?? 0) + 1;
    const ledger = ledgers.ledger(o.jobId);
    for (const [i, spec] of o.output.effects.entries()) {
      const key = effectKey(o.jobId, i);
      const entry: PlanEntry = {
        key,
        jobId: o.jobId,
        kind: spec.kind,
        action: "skip",
        reason: "",
        generation,
      };
      plan.push(entry);
      const supersededBy = await supersession(files, o, spec);
      let decision: ReturnType<typeof decideEffect>;
      try {
        decision = decideEffect({
          spec,
          key,
          generation,
          ledger: ledger.filter((r) => r.idx === i),
          forceUnprobeable: options.forceUnprobeable,
          effects,
          ...(supersededBy !== undefined && { supersededBy }),
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
          entry.reason = `${decision.reason}; resolve it with idem dlq resolve ${o.jobId} --applied|--skipped --reason R`;
          break;
        case "apply-unprobeable":
          entry.action = "apply";
          entry.reason = effects.targetDedup(spec)
            ? "cannot be probed: sent again under its key, the target drops a repeat"
            : "cannot be probed: sent (forced with --force-unprobeable)";
          break;
        case "probe": {
          const target = effectTarget(spec, config) ?? `${spec.kind}:${i}:${o.jobId}`;
          let g = groups.get(target);
          if (!g) {
            g = [];
            groups.set(target, g);
          }
          g.push({ spec, key, entry });
          break;
        }
      }
    }
  }

  for (const [target, items] of groups) {
    let results: Map<string, ProbeResult>;
    try {
      results = await effects.probeBatch(
        items.map(({ spec, key }) => ({ spec, key })),
        { simulate: needsSimulation(items) },
      );
    } catch (e) {
      for (const it of items) {
        it.entry.action = "conflict";
        it.entry.reason = `cannot probe ${target}: ${describeError(e)}`;
      }
      continue;
    }
    for (const it of items) {
      const r = results.get(it.key);
      if (!r) {
        it.entry.action = "conflict";
        it.entry.reason = "the probe gave no answer";
      } else if (r.status === "present") {
        it.entry.action = "skip";
        it.entry.reason = `present at ${target}${presentDetail(r.detail)}`;
      } else if (r.status === "absent") {
        it.entry.action = "apply";
        it.entry.reason = `absent at ${target}`;
      } else {
        it.entry.action = "conflict";
        it.entry.reason = r.reason;
      }
    }
  }

  const summary = { apply: 0, skip: 0, conflict: 0, uncertain: 0 };
  for (const e of plan) summary[e.action] += 1;
  return { plan, summary, jobIds, busy };
}

/**
 * Whether a target's probes depend on the plan's own earlier applies: a patch applies against the
 * tree the earlier steps leave, and a file written twice in the plan reads back its earlier write.
 * A git.commit is present or absent by its key alone, so a group of commits is probed as is
 * (simulating it would rewrite a scratch tree per absent commit for nothing).
 */
function needsSimulation(items: readonly { spec: EffectSpec }[]): boolean {
  const paths = new Set<string>();
  for (const { spec } of items) {
    if (spec.kind === "git.patch") return true;
    if (spec.kind === "file.write") {
      const id = `${spec.root}\0${spec.path}`;
      if (paths.has(id)) return true;
      paths.add(id);
    }
  }
  return false;
}

/** A file.write overwritten by a later recorded output is superseded (the interpreter's own rule). */
async function supersession(
  files: FileWriteIndex,
  o: OutputRecord,
  spec: EffectSpec,
): Promise<string | undefined> {
  return spec.kind === "file.write" ? files.supersededBy(o.seq, spec) : undefined;
}

function presentDetail(detail: Record<string, unknown>): string {
  if (typeof detail.commit === "string") return ` (commit ${detail.commit.slice(0, 12)})`;
  if (detail.reversed === true) return " (its change is already in the tree)";
  if (detail.simulated === true) return " (an earlier step of this plan writes the same bytes)";
  return "";
}
