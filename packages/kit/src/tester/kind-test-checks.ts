// The tester's first two phases, as the drill makes them: the samples, then probe and apply on a
// fresh key (present only after apply, one location in the scan, a second apply and a probe
// that change nothing).
import { isIdemError } from "@idem/schema";
import type { DrillCheck } from "../drill-report.js";
import type { AnyEffectKind, EffectSpecBase, ProbeResult } from "../effect-kind.js";
import type { OpenedKind } from "../open-kind.js";
import { KIND_TEST_FINDINGS as F, type KindTestFinding } from "./kind-test-report.js";

/** What every phase shares: the opened kind, its findings, and a fresh sample and key per call. */
export interface TestRun {
  readonly kind: AnyEffectKind;
  readonly opened: OpenedKind;
  readonly findings: KindTestFinding[];
  readonly checks: DrillCheck[];
  /** A valid sample never used before, checked, with a key never used before. */
  fresh(): { spec: EffectSpecBase; key: string };
}

/** The fields an error names: its `details.field` and `details.issues[].field`. */
function namedFields(e: unknown): string[] {
  if (!isIdemError(e)) return [];
  const d = e.details ?? {};
  const issues = Array.isArray(d.issues) ? (d.issues as { field?: unknown }[]) : [];
  const fields = [d.field, ...issues.map((i) => i.field)];
  return [...new Set(fields.filter((f): f is string => typeof f === "string"))];
}

/** Every invalid sample refused naming its field. */
export function checkInvalidSamples(
  run: TestRun,
): { field: string; refused: boolean; named: string[] }[] {
  return (run.kind.samples?.invalid ?? []).map(({ spec, field }, i) => {
    try {
      run.opened.check(spec);
    } catch (e) {
      if (!isIdemError(e, "INVALID_INPUT")) throw e;
      const named = namedFields(e);
      if (!named.some((n) => n === field || n.startsWith(`${field}.`)))
        run.findings.push({
          code: F.INVALID_SAMPLE_WRONG_FIELD,
          severity: "broken",
          message: `invalid sample ${i} was refused naming ${named.join(", ") || "no field"}, not ${field}`,
          details: { sample: i, field, named },
        });
      return { field, refused: true, named };
    }
    run.findings.push({
      code: F.INVALID_SAMPLE_ACCEPTED,
      severity: "broken",
      message: `invalid sample ${i} (field ${field}) passed the schema and check`,
      details: { sample: i, field },
    });
    return { field, refused: false, named: [] };
  });
}

const statusOf = (p: ProbeResult): string => p.status;
const codeOf = (e: unknown): string => (isIdemError(e) ? e.code : "THROWN");

/** Runs `step`, recording it as a check; a throw is a target-error finding and ends the phase. */
async function step<T>(
  run: TestRun,
  check: string,
  key: string,
  act: () => Promise<T>,
  judge: (value: T) => { ok: boolean; observed: string },
): Promise<T> {
  let value: T;
  try {
    value = await act();
  } catch (e) {
    run.checks.push({ check, key, ok: false, observed: codeOf(e) });
    run.findings.push({
      code: F.TARGET_ERROR,
      severity: "broken",
      message:
        `${check} of ${key} failed: ${codeOf(e)}: ${e instanceof Error ? e.message : String(e)}`.slice(
          0,
          500,
        ),
      details: { check, key, code: codeOf(e) },
    });
    throw new PhaseEnded();
  }
  const j = judge(value);
  run.checks.push({ check, key, ...j });
  return value;
}

/** Ends the checks phase after a target error (already reported). */
export class PhaseEnded extends Error {}

const locations = (keys: Map<string, string[]> | undefined, key: string): string[] =>
  keys?.get(key) ?? [];

/**
 * Probe, apply, probe, scan, a second apply and a fresh key probed twice: the drill's phase 2.
 * Answers the clean apply's probe-and-apply for the crash phase to compare against.
 */
export async function checkProbeAndApply(run: TestRun): Promise<void> {
  const broken = (code: KindTestFinding["code"], message: string, details: object) =>
    run.findings.push({ code, severity: "broken", message, details: { ...details } });
  const { spec, key } = run.fresh();
  const k = run.opened;
  const before = await step(
    run,
    "probe-before-apply",
    key,
    () => k.probe(spec, key),
    (p) => ({
      ok: p.status === "absent",
      observed: statusOf(p),
    }),
  );
  if (before.status !== "absent") {
    broken(F.PRESENT_BEFORE_APPLY, `a key never applied probed ${before.status}`, { key });
    return;
  }
  await step(
    run,
    "apply",
    key,
    () => k.apply(spec, key, { probed: before }),
    () => ({
      ok: true,
      observed: "applied",
    }),
  );
  const after = await step(
    run,
    "probe-after-apply",
    key,
    () => k.probe(spec, key),
    (p) => ({
      ok: p.status === "present",
      observed: statusOf(p),
    }),
  );
  if (after.status !== "present")
    broken(F.ABSENT_AFTER_APPLY, `after apply the probe said ${after.status}`, { key });
  const scanned = await step(
    run,
    "scan-after-apply",
    key,
    () => k.scan(spec),
    (s) => ({
      ok: s === undefined || locations(s, key).length === 1,
      observed: s === undefined ? "no scan" : locations(s, key).join(",") || "none",
    }),
  );
  if (scanned !== undefined && locations(scanned, key).length !== 1)
    broken(
      F.SCAN_MISSES_APPLIED_KEY,
      `after one apply the scan showed the key at ${locations(scanned, key).length} locations`,
      { key },
    );
  await step(
    run,
    "second-apply",
    key,
    () => k.apply(spec, key),
    () => ({ ok: true, observed: "applied" }),
  );
  const again = await step(
    run,
    "scan-after-second-apply",
    key,
    () => k.scan(spec),
    (s) => ({
      ok: s === undefined || locations(s, key).join(",") === locations(scanned, key).join(","),
      observed: s === undefined ? "no scan" : locations(s, key).join(",") || "none",
    }),
  );
  if (again !== undefined && locations(again, key).join(",") !== locations(scanned, key).join(","))
    broken(
      F.SECOND_APPLY_CHANGED_TARGET,
      "a second apply, as after a crash inside the first, changed the key's locations",
      { key },
    );
  await checkFreshProbe(run, broken);
}

async function checkFreshProbe(
  run: TestRun,
  broken: (code: KindTestFinding["code"], message: string, details: object) => void,
): Promise<void> {
  const { spec, key } = run.fresh();
  const k = run.opened;
  await step(
    run,
    "fresh-probe",
    key,
    () => k.probe(spec, key),
    (p) => ({
      ok: p.status === "absent",
      observed: statusOf(p),
    }),
  );
  const s = await step(
    run,
    "fresh-scan",
    key,
    () => k.scan(spec),
    (s) => ({
      ok: locations(s, key).length === 0,
      observed: s === undefined ? "no scan" : locations(s, key).join(",") || "none",
    }),
  );
  const second = await step(
    run,
    "fresh-probe-again",
    key,
    () => k.probe(spec, key),
    (p) => ({
      ok: p.status === "absent",
      observed: statusOf(p),
    }),
  );
  if (locations(s, key).length > 0 || second.status !== "absent")
    broken(F.PROBE_CHANGED_TARGET, "probing a key never applied made it present", { key });
}
