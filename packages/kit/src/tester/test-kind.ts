// @idem/kit/test: the kind's conformance in process, under any test framework (vitest, node:test,
// jest): its samples, probe and apply on a fresh key, then a throw injected at every fault point
// and around every request the kind makes through `ctx.fetch`, each followed by the retry idem
// would make. The subprocess drill (`idem kinds test`, `drillKind`) stays for real crashes.
import { AssertionError } from "node:assert";
import { IdemError, isIdemError } from "@idem/schema";
import type { AnyEffectKind, EffectSpecBase } from "../effect-kind.js";
import { type OpenKindOptions, openKind } from "../open-kind.js";
import { createInjector } from "./injected-crash.js";
import {
  checkInvalidSamples,
  checkProbeAndApply,
  PhaseEnded,
  type TestRun,
} from "./kind-test-checks.js";
import { cleanApply, crashScenario, crashSites } from "./kind-test-crashes.js";
import {
  KIND_TEST_FINDINGS as F,
  KIND_TEST_BLIND_SPOTS,
  type KindTestReport,
} from "./kind-test-report.js";

/** How `testKind` hosts the kind: as `openKind` does (options, env, dir, limits), and how far it goes. */
export interface TestKindOptions extends Omit<OpenKindOptions, "host" | "fault"> {
  /**
   * The number of the first sample (`samples.valid(i)`); each scenario takes the next. Default: a
   * large random number, so that two runs on one target never share a spec or a key.
   */
  firstSample?: number;
  /** The most throw sites tried (default 200); more are reported as `scenarios-capped`. */
  maxScenarios?: number;
}

/**
 * Tests a kind in process against the target its options name (a stand-in or a test instance:
 * the samples act on it for real) and answers the report: `ok` when no finding is `broken`.
 * Never throws for a broken kind (that is the report); see `assertKind`.
 * @throws IdemError INVALID_CONFIG when the options do not parse or the kind has no samples.
 */
export async function testKind(
  kind: AnyEffectKind,
  options: TestKindOptions = {},
): Promise<KindTestReport> {
  const inj = createInjector(options.fetch ?? globalThis.fetch);
  const opened = openKind(kind, { ...options, fetch: inj.fetch, fault: (p) => inj.fault(p) });
  if (!kind.samples) {
    await opened.close();
    throw new IdemError("INVALID_CONFIG", `effect kind ${kind.name} has no samples to test with`);
  }
  const samples = kind.samples;
  let i = options.firstSample ?? 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
  let valid = 0;
  const run: TestRun = {
    kind,
    opened,
    findings: [],
    checks: [],
    fresh() {
      const n = i++;
      valid++;
      let spec: EffectSpecBase;
      try {
        spec = opened.check(samples.valid(n, opened.context));
      } catch (e) {
        if (!isIdemError(e, "INVALID_INPUT")) throw e;
        run.findings.push({
          code: F.VALID_SAMPLE_REFUSED,
          severity: "broken",
          message: `valid sample ${n} was refused: ${e.message}`,
          details: { sample: n },
        });
        throw new PhaseEnded();
      }
      return { spec, key: `kit-test-${n}/0` };
    },
  };
  const report: KindTestReport = {
    kind: kind.name,
    guarantee: kind.guarantee,
    ok: false,
    findings: run.findings,
    samples: { invalid: [], valid: 0 },
    checks: run.checks,
    requests: [],
    faultCalls: [],
    scenarios: [],
    cannotSee: [...KIND_TEST_BLIND_SPOTS],
  };
  try {
    report.samples.invalid = checkInvalidSamples(run);
    await checkProbeAndApply(run);
    await crashPhase(run, inj, report, options.maxScenarios ?? 200);
  } catch (e) {
    if (!(e instanceof PhaseEnded)) throw e;
  } finally {
    report.samples.valid = valid;
    await opened.close();
  }
  const uncertain = run.findings.some((f) => f.severity === "uncertain");
  if (uncertain && kind.guarantee !== "uncertain-window")
    run.findings.push({
      code: F.GUARANTEE_NOT_SHOWN,
      severity: "broken",
      message: `it declares ${kind.guarantee}, and a throw left an effect uncertain: declare uncertain-window, or make the probe tell`,
      details: { declared: kind.guarantee, shown: "uncertain-window" },
    });
  report.ok = !run.findings.some((f) => f.severity === "broken");
  return report;
}

async function crashPhase(
  run: TestRun,
  inj: ReturnType<typeof createInjector>,
  report: KindTestReport,
  max: number,
): Promise<void> {
  if (run.findings.some((f) => f.severity === "broken")) return;
  const clean = await cleanApply(run, inj);
  report.requests = clean.requests;
  report.faultCalls = clean.faultCalls;
  notesOfClean(run, clean.requests.length, clean.faultCalls);
  const sites = crashSites(clean);
  if (sites.length > max)
    run.findings.push({
      code: F.SCENARIOS_CAPPED,
      severity: "note",
      message: `${sites.length} throw sites, the first ${max} tried (maxScenarios)`,
    });
  for (const site of sites.slice(0, max))
    report.scenarios.push(await crashScenario(run, inj, clean, site));
}

function notesOfClean(run: TestRun, requests: number, faultCalls: readonly string[]): void {
  const listed = run.kind.faultPoints ?? [];
  if (requests === 0)
    run.findings.push({
      code: F.NO_REQUESTS_SEEN,
      severity: "note",
      message:
        "the kind made no request through ctx.fetch: throws were injected at its fault points only, and a gap between two writes of its own is not seen",
    });
  for (const p of new Set(faultCalls))
    if (!listed.includes(p))
      run.findings.push({
        code: F.FAULT_POINT_NOT_LISTED,
        severity: "note",
        message: `the kind calls fault point ${p} but does not list it in faultPoints: the drill never kills there`,
        details: { point: p },
      });
  for (const p of listed)
    if (!faultCalls.includes(p))
      run.findings.push({
        code: F.FAULT_POINT_NOT_REACHED,
        severity: "note",
        message: `fault point ${p} is listed but one clean apply never called it`,
        details: { point: p },
      });
}

/**
 * `testKind`, then an AssertionError (node:assert's, which every test framework reports) listing
 * every broken finding when there is one; answers the report otherwise.
 */
export async function assertKind(
  kind: AnyEffectKind,
  options: TestKindOptions = {},
): Promise<KindTestReport> {
  const report = await testKind(kind, options);
  const broken = report.findings.filter((f) => f.severity === "broken");
  if (broken.length > 0)
    throw new AssertionError({
      message: `effect kind ${kind.name} is broken:\n${broken.map((f) => `- ${f.code}: ${f.message}`).join("\n")}`,
      actual: broken.map((f) => f.code),
      expected: [],
      operator: "assertKind",
    });
  return report;
}
