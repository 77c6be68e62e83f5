import { describeEffect, type Effects, supersedeKeyOf } from "@idem/effects";
import {
  type EffectRecord,
  isSettledEffect,
  type JournalStore,
  type OutputRecord,
} from "@idem/journal";
import { type Config, describeError, type EffectSpec, effectKey } from "@idem/schema";
import { type AuditedApproval, approvalDecisions } from "../approvals/approval-history.js";
import { SupersedeIndex } from "../decide/supersede-index.js";
import { unknownKeysOf } from "./unknown-keys.js";

/** The reconciliation of docs/cli.md (`idem audit --json`), plus what was scanned. */
export interface AuditReport {
  since: number | null;
  enqueued: number;
  outputs: number;
  redeliveriesSkipped: number;
  conflictsRefused: number;
  effects: { applied: number; present: number };
  /** Extra copies of effects found at their targets: a key on n commits counts n - 1. */
  duplicateEffectsAtTargets: number;
  duplicates: { key: string; count: number; target: string; commits: string[] }[];
  drift: { key: string; reason: string }[];
  deadLetters: number;
  /** The targets scanned (a kind's `scan`), once each: `<repo>@<branch>` and how many keys they carry. */
  targets: { target: string; keys: number }[];
  /** Settled effects whose kind cannot be checked at the target (nats.publish, http without probeUrl). */
  unverifiable: number;
  /**
   * Effect keys at a target that the journal does not know: an `Idem-Effect` trailer on a branch
   * with no recorded effect behind it (no output of that job here or in the archive, or no effect
   * of that index, or not an effect key at all). The journal lost records (a truncated or restored
   * journal: docs/runbook.md, "A damaged journal"), or something else wrote the trailer.
   */
  unknownKeys: { key: string; target: string; commits: string[] }[];
  /** Configured git targets that could not be read for unknown keys, with why. */
  unread: { target: string; error: string }[];
  /**
   * Every decision on an approval since `since` (docs/approvals.md): who approved or rejected what
   * (job, generation, effects, the output's digest), when and why; and the requests that expired.
   */
  approvals: AuditedApproval[];
}

/**
 * Whether an audit found nothing wrong: no effect key more than once at its target, no drift and
 * no key at a target that the journal does not know (`idem audit` exits 3 otherwise).
 */
export function isAuditClean(
  report: Pick<AuditReport, "duplicates" | "drift"> & Partial<Pick<AuditReport, "unknownKeys">>,
): boolean {
  return (
    report.duplicates.length === 0 &&
    report.drift.length === 0 &&
    (report.unknownKeys?.length ?? 0) === 0
  );
}

const CONFLICT_EVENTS = ["output.conflict", "job.conflict"] as const;

/**
 * Reconciles the journal with its targets. Counts come from the journal (events for `since`);
 * `duplicates` from one scan per target the outputs reference, by the kinds that can scan theirs
 * (a git branch's `Idem-Effect` trailers); `drift` lists every effect whose latest settled ledger
 * row says applied or present but that its target lacks (by the scan, else the kind's probe; an
 * effect superseded by a later recorded one, a file.write of the same path, is not drift). Read-only: it
 * writes nothing to the journal or to a target, so it is safe on a read-only journal and any number
 * of times. A target that cannot be read or probed is reported as drift with the reason, not
 * thrown; journal read errors propagate.
 */
export async function buildAudit(
  config: Config,
  journal: JournalStore,
  effects: Effects,
  since?: number,
): Promise<AuditReport> {
  const all = await journal.outputs.select({ all: true });
  const inWindow = since === undefined ? all : all.filter((o) => o.recordedAt >= since);
  const counts = await journal.events.count(
    ["redelivery.skipped", "effect.applied", "effect.present", ...CONFLICT_EVENTS],
    since,
  );
  const report: AuditReport = {
    since: since ?? null,
    enqueued: await journal.jobs.count(since === undefined ? {} : { since }),
    outputs: inWindow.length,
    redeliveriesSkipped: counts["redelivery.skipped"] ?? 0,
    conflictsRefused: CONFLICT_EVENTS.reduce((n, t) => n + (counts[t] ?? 0), 0),
    effects: { applied: counts["effect.applied"] ?? 0, present: counts["effect.present"] ?? 0 },
    duplicateEffectsAtTargets: 0,
    duplicates: [],
    drift: [],
    deadLetters: (await journal.deadLetters.list(since === undefined ? {} : { since })).length,
    targets: [],
    unverifiable: 0,
    unknownKeys: [],
    unread: [],
    approvals: await approvalDecisions(journal, since),
  };

  // Every target the config defines that its kind can scan (where a journal that lost its records
  // still has keys) and every one the outputs reference, scanned once.
  const scanned = new Map<string, EffectSpec>();
  for (const spec of effects.configuredScans()) {
    const target = effects.scanTarget(spec);
    if (target !== undefined && !scanned.has(target)) scanned.set(target, spec);
  }
  const referenced = new Set<string>();
  for (const o of all) {
    for (const spec of o.output.effects) {
      const target = effects.kinds.get(spec.kind) ? effects.scanTarget(spec) : undefined;
      if (target === undefined) continue;
      referenced.add(target);
      if (!scanned.has(target)) scanned.set(target, spec);
    }
  }
  const scans = new Map<string, Map<string, string[]> | Error>();
  const inWindowKeys = new Set<string>();
  for (const o of inWindow) {
    for (let i = 0; i < o.output.effects.length; i++) inWindowKeys.add(effectKey(o.jobId, i));
  }
  for (const [id, spec] of scanned) {
    let scan: Map<string, string[]> | Error;
    try {
      scan = (await effects.scan(spec)) ?? new Map();
    } catch (e) {
      scan = new Error(describeError(e));
    }
    scans.set(id, scan);
    if (scan instanceof Error) {
      // A referenced target's keys are reported as drift below, with the reason.
      if (!referenced.has(id)) report.unread.push({ target: id, error: scan.message });
      continue;
    }
    report.targets.push({ target: id, keys: scan.size });
    for (const [key, commits] of scan) {
      if (commits.length < 2) continue;
      if (since !== undefined && !inWindowKeys.has(key)) continue;
      report.duplicates.push({ key, count: commits.length, target: id, commits });
      report.duplicateEffectsAtTargets += commits.length - 1;
    }
  }

  const superseding = new SupersedeIndex(journal, effects.kinds);
  for (const o of inWindow) {
    const ledger = await journal.ledger.forJob(o.jobId);
    for (const [i, spec] of o.output.effects.entries()) {
      const key = effectKey(o.jobId, i);
      const settled = latestSettled(ledger, i);
      if (!settled || (settled.state !== "applied" && settled.state !== "present")) continue;
      const reason = await driftOf({
        effects,
        superseding,
        scans,
        output: o,
        idx: i,
        spec,
        key,
        settled,
      });
      if (reason === "unverifiable") report.unverifiable += 1;
      else if (reason !== undefined) report.drift.push({ key, reason });
    }
  }
  report.unknownKeys = unknownKeysOf(scans, all, config.journal.archiveDir);
  report.duplicates.sort((a, b) => a.key.localeCompare(b.key));
  return report;
}

/** The ledger row of effect `idx` in the latest generation that settled it. */
function latestSettled(ledger: readonly EffectRecord[], idx: number): EffectRecord | undefined {
  let best: EffectRecord | undefined;
  for (const r of ledger) {
    if (r.idx !== idx || !isSettledEffect(r.state)) continue;
    if (!best || r.generation > best.generation) best = r;
  }
  return best;
}

/** One settled effect to reconcile with its target, and what the audit read already. */
interface DriftQuestion {
  effects: Effects;
  superseding: SupersedeIndex;
  scans: Map<string, Map<string, string[]> | Error>;
  output: OutputRecord;
  idx: number;
  spec: EffectSpec;
  key: string;
  settled: EffectRecord;
}

/** Why a settled effect is not at its target, "unverifiable", or undefined when it is there. */
async function driftOf(q: DriftQuestion): Promise<string | undefined> {
  const { effects, output, idx, spec, key, settled } = q;
  const as = `the ledger says ${settled.state} (generation ${settled.generation})`;
  if (!effects.kinds.get(spec.kind)) return `${as} but its kind ${spec.kind} is not registered`;
  // Superseded by a later effect of this output or of a later recorded one: not drift.
  const supersedeKey = supersedeKeyOf(spec, effects.kinds);
  if (supersedeKey !== undefined) {
    const laterInOutput = output.output.effects
      .slice(idx + 1)
      .some((e) => supersedeKeyOf(e, effects.kinds) === supersedeKey);
    if (laterInOutput || (await q.superseding.supersededBy(output.seq, spec)) !== undefined)
      return undefined;
  }
  const what = describeEffect(spec, effects.kinds);
  const target = effects.scanTarget(spec);
  if (target !== undefined) {
    const scan = q.scans.get(target);
    if (scan instanceof Error) return `${as} but ${target} cannot be read: ${scan.message}`;
    if (scan?.has(key)) return undefined;
    // Found present without a record of its own at the target (a patch whose change was already
    // there carries no trailer): ask the target whether the effect is still there.
    const r = await effects
      .probe(spec, key, { since: output.recordedAt })
      .catch((e: unknown) => e as Error);
    if (!(r instanceof Error) && r.status === "present") return undefined;
    return `${as} but nothing at ${target} carries the key ${key}`;
  }
  if (!effects.probeable(spec)) return "unverifiable";
  const r = await effects
    .probe(spec, key, { since: output.recordedAt })
    .catch((e: unknown) => e as Error);
  if (r instanceof Error) return `${as} but ${what} cannot be probed: ${r.message}`;
  if (r.status === "present") return undefined;
  return supersedeKey === undefined
    ? `${as} but the target's probe says ${r.status}`
    : `${as} but ${what} no longer holds what was written, and no later recorded effect replaced it`;
}
