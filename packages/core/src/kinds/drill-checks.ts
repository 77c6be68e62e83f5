import { checkEffects, type Effects } from "@idem/effects";
import {
  type AnyEffectKind,
  DRILL_FINDINGS,
  type DrillCheck,
  type DrillFinding,
  type KindDrillReport,
  type ProbeResult,
} from "@idem/kit";
import { type EffectSpec, effectKey, isIdemError } from "@idem/schema";
import type { DrillWorkspace } from "./drill-workspace.js";

/** A step of the checks that failed (its finding written). */
const FAILED: unique symbol = Symbol("failed");
type Failed = typeof FAILED;

/** The valid samples of a drill, by their place: 0 the checks' apply, 1 the fresh key, 2.. the outputs. */
export interface DrillSamples {
  /** The i-th valid sample, checked as an output's effect would be; undefined when it is refused. */
  at(i: number): EffectSpec | undefined;
  /** How many were asked for. */
  readonly used: number;
}

/**
 * Phase one: every invalid sample of the kind must be refused before record by its schema and
 * checks with an issue naming its field (or a field inside it); each valid sample the drill uses
 * must pass (a refused one is a finding, and is not used).
 */
export function checkSamples(
  kind: AnyEffectKind,
  ws: DrillWorkspace,
  firstSample: number,
  findings: DrillFinding[],
): { invalid: KindDrillReport["samples"]["invalid"]; samples: DrillSamples } {
  const { registry } = ws;
  const invalid = (kind.samples?.invalid ?? []).map(({ spec, field }, i) => {
    const r = checkEffects([spec as EffectSpec], registry);
    if (r.ok) {
      findings.push({
        code: DRILL_FINDINGS.INVALID_SAMPLE_ACCEPTED,
        severity: "broken",
        message: `invalid sample ${i} (${field}) passed the kind's schema and checks`,
        details: { sample: i, field },
      });
      return { field, refused: false, named: [] };
    }
    const named = r.issues.map((issue) => issue.path.replace(/^effects\.0\.?/, ""));
    if (!named.some((n) => n === field || n.startsWith(`${field}.`))) {
      findings.push({
        code: DRILL_FINDINGS.INVALID_SAMPLE_WRONG_FIELD,
        severity: "broken",
        message: `invalid sample ${i} was refused naming ${named.join(", ")}, not ${field}`,
        details: { sample: i, field, named },
      });
    }
    return { field, refused: true, named };
  });
  const cache = new Map<number, EffectSpec | undefined>();
  const samples: DrillSamples = {
    get used() {
      return cache.size;
    },
    at(i) {
      if (cache.has(i)) return cache.get(i);
      const spec = validSample(kind, ws, firstSample + i, findings);
      cache.set(i, spec);
      return spec;
    },
  };
  return { invalid, samples };
}

function validSample(
  kind: AnyEffectKind,
  ws: DrillWorkspace,
  n: number,
  findings: DrillFinding[],
): EffectSpec | undefined {
  const spec = kind.samples?.valid(n, ws.registry.context(kind.name)) as EffectSpec;
  const r = checkEffects([spec], ws.registry);
  if (r.ok) return r.specs[0];
  findings.push({
    code: DRILL_FINDINGS.VALID_SAMPLE_REFUSED,
    severity: "broken",
    message: `valid sample ${n} was refused before record: ${r.issues.map((i) => `${i.path} ${i.message}`).join("; ")}`,
    details: { sample: n, issues: r.issues },
  });
  return undefined;
}

/** What the checks against the target need: the effects, the samples, keys of the drill's own. */
export interface TargetChecks {
  effects: Effects;
  kind: AnyEffectKind;
  /** The applied sample and a fresh one (samples 0 and 1). */
  applied: EffectSpec;
  fresh: EffectSpec;
  /** The job ID prefix of this drill (its keys are `<prefix>-check/0`, `<prefix>-fresh/0`). */
  prefix: string;
  since: number;
}

/**
 * Phase two, against the real target: a key never applied probes absent; apply; it probes present
 * (and the scan shows it at one location); a second apply changes nothing (the scan's locations
 * are the same, else the probe still says present); a fresh key probed twice changes nothing (the
 * scan shows no new key; the second probe still says absent). Each failure is a finding; an error
 * of the target ends the phase with a `target-error` finding.
 */
export async function checkTarget(
  t: TargetChecks,
  findings: DrillFinding[],
): Promise<DrillCheck[]> {
  const checks: DrillCheck[] = [];
  const { effects, applied, fresh, since } = t;
  const scans = t.kind.scan !== undefined;
  const key = effectKey(`${t.prefix}-check`, 0);
  const freshKey = effectKey(`${t.prefix}-fresh`, 0);
  const found = (
    code: DrillFinding["code"],
    message: string,
    details: Record<string, unknown> = {},
  ) => findings.push({ code, severity: "broken", message, details });
  const step = async <T>(check: string, k: string, op: () => Promise<T>): Promise<T | Failed> => {
    try {
      return await op();
    } catch (e) {
      const code = isIdemError(e) ? e.code : "ERROR";
      checks.push({ check, key: k, ok: false, observed: code });
      found(
        DRILL_FINDINGS.TARGET_ERROR,
        `${check} of ${k} failed: ${code}: ${(e as Error).message}`,
        {
          check,
          key: k,
          code,
        },
      );
      return FAILED;
    }
  };
  const locations = async (spec: EffectSpec, k: string, check: string) => {
    const map = await step(check, k, async () => (await effects.scan(spec)) ?? new Map());
    return map === FAILED ? undefined : { all: map, of: [...(map.get(k) ?? [])].sort() };
  };

  // A key never applied.
  const before = await step("probe-before-apply", key, () =>
    effects.probe(applied, key, { since }),
  );
  if (before === FAILED) return checks;
  checks.push(probeCheck("probe-before-apply", key, before, "absent"));
  if (before.status !== "absent") {
    found(DRILL_FINDINGS.PRESENT_BEFORE_APPLY, `a key never applied probed ${before.status}`, {
      key,
      status: before.status,
    });
    return checks;
  }
  if (
    (await step("apply", key, () => effects.apply(applied, key, { probed: before, since }))) ===
    FAILED
  )
    return checks;
  checks.push({ check: "apply", key, ok: true, observed: "applied" });
  const after = await step("probe-after-apply", key, () => effects.probe(applied, key, { since }));
  if (after === FAILED) return checks;
  checks.push(probeCheck("probe-after-apply", key, after, "present"));
  if (after.status !== "present")
    found(DRILL_FINDINGS.ABSENT_AFTER_APPLY, `after apply the probe said ${after.status}`, {
      key,
      status: after.status,
    });
  let first: string[] | undefined;
  if (scans) {
    const seen = await locations(applied, key, "scan-after-apply");
    if (!seen) return checks;
    first = seen.of;
    const ok = seen.of.length === 1;
    checks.push({ check: "scan-after-apply", key, ok, observed: seen.of.join(", ") || "none" });
    if (!ok)
      found(
        DRILL_FINDINGS.SCAN_MISSES_APPLIED_KEY,
        `after one apply the scan shows the key at ${seen.of.length} locations`,
        { key, locations: seen.of },
      );
  }

  // A second apply, as after a crash inside the first: apply checks for itself.
  if ((await step("second-apply", key, () => effects.apply(applied, key, { since }))) === FAILED)
    return checks;
  if (scans && first) {
    const seen = await locations(applied, key, "second-apply");
    if (!seen) return checks;
    const ok = sameList(first, seen.of);
    checks.push({ check: "second-apply", key, ok, observed: seen.of.join(", ") || "none" });
    if (!ok)
      found(
        DRILL_FINDINGS.SECOND_APPLY_CHANGED_TARGET,
        `a second apply changed the target: the key was at ${first.length} location(s), now at ${seen.of.length}`,
        { key, before: first, after: seen.of },
      );
  } else {
    const again = await step("second-apply", key, () => effects.probe(applied, key, { since }));
    if (again === FAILED) return checks;
    const ok = again.status === "present";
    checks.push({ check: "second-apply", key, ok, observed: again.status });
    if (!ok)
      found(
        DRILL_FINDINGS.SECOND_APPLY_CHANGED_TARGET,
        `after a second apply the probe said ${again.status}`,
        { key, status: again.status },
      );
  }

  // A fresh key, probed twice: nothing may change.
  const scanBefore = scans ? await locations(fresh, freshKey, "fresh-scan") : undefined;
  if (scans && !scanBefore) return checks;
  const q1 = await step("fresh-probe", freshKey, () => effects.probe(fresh, freshKey, { since }));
  if (q1 === FAILED) return checks;
  checks.push(probeCheck("fresh-probe", freshKey, q1, "absent"));
  if (q1.status !== "absent")
    found(DRILL_FINDINGS.PRESENT_BEFORE_APPLY, `a key never applied probed ${q1.status}`, {
      key: freshKey,
      status: q1.status,
    });
  if (scanBefore) {
    const scanAfter = await locations(fresh, freshKey, "fresh-scan");
    if (!scanAfter) return checks;
    const added = [...scanAfter.all.keys()].filter((k) => !scanBefore.all.has(k));
    const ok = added.length === 0;
    checks.push({ check: "fresh-scan", key: freshKey, ok, observed: added.join(", ") || "none" });
    if (!ok)
      found(
        DRILL_FINDINGS.PROBE_CHANGED_TARGET,
        `probing a key never applied added ${added.length} key(s) to the target`,
        { key: freshKey, added },
      );
  }
  const q2 = await step("fresh-probe-again", freshKey, () =>
    effects.probe(fresh, freshKey, { since }),
  );
  if (q2 === FAILED) return checks;
  checks.push(probeCheck("fresh-probe-again", freshKey, q2, "absent"));
  if (q1.status === "absent" && q2.status !== "absent")
    found(
      DRILL_FINDINGS.PROBE_CHANGED_TARGET,
      `a key never applied probed absent, then ${q2.status} the second time`,
      { key: freshKey, status: q2.status },
    );
  return checks;
}

function probeCheck(check: string, key: string, r: ProbeResult, want: string): DrillCheck {
  return { check, key, ok: r.status === want, observed: r.status };
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);
