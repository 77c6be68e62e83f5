import type { Effects } from "@idem/effects";
import type { JournalStore } from "@idem/journal";
import { type AnyEffectKind, DRILL_FINDINGS, type DrillFinding, type DrillKey } from "@idem/kit";
import type { EffectSpec } from "@idem/schema";
import type { CrashPhase } from "./drill-crashes.js";

/**
 * Where every key of the crash phase stands once the journal drained: at the target (counted by
 * the kind's scan, one scan per target, else by its probe), and in the journal (its run's state
 * and class, its ledger state).
 */
export async function countKeys(
  kind: AnyEffectKind,
  effects: Effects,
  journal: JournalStore,
  crashes: CrashPhase,
  since: number,
): Promise<DrillKey[]> {
  const scans = new Map<string, Promise<Map<string, string[]> | undefined>>();
  const scanOf = (spec: EffectSpec) => {
    const target = effects.scanTarget(spec) ?? "";
    let s = scans.get(target);
    if (!s) {
      s = effects.scan(spec);
      scans.set(target, s);
    }
    return s;
  };
  const keys: DrillKey[] = [];
  for (const o of crashes.outputs) {
    let atTarget: DrillKey["atTarget"];
    let locations: string[] | undefined;
    if (kind.scan) {
      locations = [...((await scanOf(o.spec))?.get(o.key) ?? [])].sort();
      atTarget =
        locations.length === 0 ? "missing" : locations.length === 1 ? "once" : "duplicated";
    } else {
      const p = await effects.probe(o.spec, o.key, { since });
      atTarget = p.status === "present" ? "present" : "missing";
    }
    const run = await journal.runs.latest(o.jobId);
    const ledger = run
      ? (await journal.ledger.history(o.key)).find((r) => r.generation === run.generation)
      : undefined;
    keys.push({
      key: o.key,
      jobId: o.jobId,
      atTarget,
      ...(locations === undefined ? {} : { locations }),
      run: run?.state ?? "none",
      class: run?.state === "dead" ? (run.class ?? null) : null,
      ledger: ledger?.state ?? null,
      ...(run?.state === "dead" ? { after: crashes.after.get(o.jobId) ?? null } : {}),
    });
  }
  return keys;
}

/**
 * The findings of the crash phase: keys duplicated or missing at the target, runs that ended dead
 * or `uncertain` (with the fault points before them), a journal that did not drain, the kind's own
 * fault points never reached, and a count made without a scan.
 */
export function crashFindings(
  kind: AnyEffectKind,
  keys: readonly DrillKey[],
  crashes: CrashPhase,
): DrillFinding[] {
  const out: DrillFinding[] = [];
  const duplicated = keys.filter((k) => k.atTarget === "duplicated");
  if (duplicated.length > 0)
    out.push({
      code: DRILL_FINDINGS.DUPLICATED_AT_TARGET,
      severity: "broken",
      message: `${duplicated.length} key(s) are at the target more than once after the crashes`,
      details: { keys: duplicated.map((k) => ({ key: k.key, locations: k.locations })) },
    });
  const missing = keys.filter(
    (k) =>
      k.atTarget === "missing" &&
      (k.run === "done" || k.ledger === "applied" || k.ledger === "present"),
  );
  if (missing.length > 0)
    out.push({
      code: DRILL_FINDINGS.MISSING_AT_TARGET,
      severity: "broken",
      message: `${missing.length} key(s) the journal settled are not at the target`,
      details: { keys: missing.map((k) => ({ key: k.key, ledger: k.ledger })) },
    });
  const dead = keys.filter((k) => k.run === "dead" && k.class !== "uncertain");
  if (dead.length > 0)
    out.push({
      code: DRILL_FINDINGS.RUNS_ENDED_DEAD,
      severity: "broken",
      message: `${dead.length} run(s) ended dead (${[...new Set(dead.map((k) => k.class))].join(", ")})`,
      details: { runs: dead.map((k) => ({ jobId: k.jobId, class: k.class, after: k.after })) },
    });
  const uncertain = keys.filter((k) => k.run === "dead" && k.class === "uncertain");
  if (uncertain.length > 0) {
    const points = [...new Set(uncertain.map((k) => k.after ?? "no crash"))];
    out.push({
      code: DRILL_FINDINGS.RUNS_ENDED_UNCERTAIN,
      severity: "uncertain",
      message: `${uncertain.length} effect(s) ended uncertain, after a crash at ${points.join(", ")}`,
      details: { keys: uncertain.map((k) => ({ key: k.key, after: k.after })), points },
    });
  }
  if (!crashes.drained)
    out.push({
      code: DRILL_FINDINGS.NOT_DRAINED,
      severity: "broken",
      message: "runs were still pending, running or waiting for a retry after the last start",
    });
  const killedAt = new Set(crashes.starts.filter((s) => s.killed).map((s) => s.point));
  const unreached = (kind.faultPoints ?? []).filter((p) => !killedAt.has(p));
  if (unreached.length > 0)
    out.push({
      code: DRILL_FINDINGS.FAULT_POINT_NOT_REACHED,
      severity: "note",
      message: `the kind's fault point(s) ${unreached.join(", ")} were never reached`,
      details: { points: unreached },
    });
  if (!kind.scan)
    out.push({
      code: DRILL_FINDINGS.DUPLICATES_NOT_COUNTED,
      severity: "note",
      message:
        "the kind has no scan: keys were found by its probe, which cannot see a second copy of an effect",
    });
  return out;
}
