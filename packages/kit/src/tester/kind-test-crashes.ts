// The tester's third phase: one clean probe and apply counted, then for every request it made
// (before it is sent, after it took effect) and every fault point it called, a fresh sample whose
// probe and apply throw there, and the retry idem would make (probe, then apply when absent),
// compared with the clean apply: the key once at the target, as many writes as a clean apply.
import { classifyError, isIdemError, isRetryableClass } from "@idem/schema";
import type { EffectSpecBase, ProbeResult } from "../effect-kind.js";
import { type CrashAt, InjectedCrash, type Injector, isWrite } from "./injected-crash.js";
import type { TestRun } from "./kind-test-checks.js";
import {
  KIND_TEST_FINDINGS as F,
  type KindTestFinding,
  type KindTestScenario,
} from "./kind-test-report.js";

/** The writes one clean probe and apply made, by method, and what it asked and called. */
export interface CleanApply {
  requests: string[];
  faultCalls: string[];
  writes: Map<string, number>;
}

const countByMethod = (methods: readonly string[]): Map<string, number> => {
  const m = new Map<string, number>();
  for (const x of methods) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
};

async function probeThenApply(
  run: TestRun,
  spec: EffectSpecBase,
  key: string,
): Promise<ProbeResult> {
  const probed = await run.opened.probe(spec, key);
  if (probed.status === "absent") await run.opened.apply(spec, key, { probed });
  return probed;
}

/** One clean probe and apply on a fresh key, counted. */
export async function cleanApply(run: TestRun, inj: Injector): Promise<CleanApply> {
  const { spec, key } = run.fresh();
  inj.arm(undefined);
  await probeThenApply(run, spec, key);
  const seen = {
    requests: inj.requests.map((r) => `${r.method} ${r.path}`),
    faultCalls: [...inj.faults],
    writes: countByMethod(inj.requests.filter(isWrite).map((r) => r.method)),
  };
  inj.arm(undefined);
  return seen;
}

/** Every place one clean apply offers a throw: each request before and after, each fault call. */
export function crashSites(clean: CleanApply): { crash: CrashAt; at: string }[] {
  const sites: { crash: CrashAt; at: string }[] = [];
  clean.requests.forEach((label, i) => {
    for (const when of ["before", "after"] as const)
      sites.push({
        crash: { at: "request", n: i + 1, when },
        at: `${when} request ${i + 1} (${label})`,
      });
  });
  clean.faultCalls.forEach((point, i) => {
    sites.push({ crash: { at: "fault", n: i + 1 }, at: `fault ${point} (call ${i + 1})` });
  });
  return sites;
}

/** Whether a thrown value is the injected crash itself, unwrapped by the kind. */
const isCrash = (e: unknown): boolean => e instanceof InjectedCrash;
/** Whether the injected crash is anywhere in its cause chain. */
function causedByCrash(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 8; c = c.cause, depth++)
    if (c instanceof InjectedCrash) return true;
  return false;
}

/**
 * What idem does with what the throw's attempt ended with: a crash, or a failure it retries, is
 * probed again; an uncertain outcome waits for a person; anything else ends the run dead.
 */
function afterAttempt(e: unknown): "retry" | "uncertain" | "dead" {
  if (e === undefined || isCrash(e)) return "retry";
  const cls = classifyError(e);
  if (cls === "uncertain") return "uncertain";
  return isRetryableClass(cls) ? "retry" : "dead";
}

/** One throw injected at `site`, the retry after it, and what the target then shows. */
export async function crashScenario(
  run: TestRun,
  inj: Injector,
  clean: CleanApply,
  site: { crash: CrashAt; at: string },
): Promise<KindTestScenario> {
  const { spec, key } = run.fresh();
  const found = (
    code: KindTestFinding["code"],
    severity: KindTestFinding["severity"],
    message: string,
  ) =>
    run.findings.push({
      code,
      severity,
      message: `${site.at}: ${message}`,
      details: { at: site.at, key },
    });
  inj.arm(site.crash);
  let thrown: unknown;
  try {
    await probeThenApply(run, spec, key);
  } catch (e) {
    thrown = e;
  }
  const fired = inj.fired;
  const methods = inj.requests.filter(isWrite).map((r) => r.method);
  inj.arm(undefined);
  const base = { at: site.at, key, fired };
  const next = afterAttempt(thrown);
  if (next !== "retry") {
    const what = isIdemError(thrown) ? thrown.code : describe(thrown);
    if (next === "uncertain")
      found(
        F.RUNS_ENDED_UNCERTAIN,
        "uncertain",
        `the attempt ended ${what}: the run waits for a person`,
      );
    else
      found(
        F.RUNS_ENDED_DEAD,
        "broken",
        causedByCrash(thrown) && !isIdemError(thrown)
          ? `a failed request escaped as a plain ${describe(thrown)}, which idem never retries: wrap it in fail.transient`
          : `the attempt ended ${what}, which idem never retries`,
      );
    return { ...base, writes: methods.length, observed: what, ok: false };
  }
  let observed: string;
  try {
    const retried = await probeThenApply(run, spec, key);
    if (retried.status === "conflict") {
      found(F.CONFLICT_AFTER_THROW, "broken", `the retry's probe said conflict: ${retried.reason}`);
      return { ...base, writes: methods.length, observed: "conflict", ok: false };
    }
    methods.push(...inj.requests.filter(isWrite).map((r) => r.method));
    observed = (await run.opened.probe(spec, key)).status;
  } catch (e) {
    found(F.RETRY_FAILED, "broken", `the retry failed: ${describe(e)}`);
    return {
      ...base,
      writes: methods.length,
      observed: isIdemError(e) ? e.code : "THROWN",
      ok: false,
    };
  }
  const before = run.findings.length;
  if (observed !== "present")
    found(F.MISSING_AT_TARGET, "broken", `after the retry the probe said ${observed}`);
  const at = (await run.opened.scan(spec))?.get(key);
  if (at !== undefined && at.length > 1)
    found(F.DUPLICATED_AT_TARGET, "broken", `the scan shows the key at ${at.length} locations`);
  compareWrites(run, clean, countByMethod(methods), spec, found);
  return { ...base, writes: methods.length, observed, ok: run.findings.length === before };
}

/** Fewer writes than a clean apply: one was skipped; more POST or PATCH: one was repeated. */
function compareWrites(
  run: TestRun,
  clean: CleanApply,
  seen: Map<string, number>,
  spec: EffectSpecBase,
  found: (
    code: KindTestFinding["code"],
    severity: KindTestFinding["severity"],
    message: string,
  ) => void,
): void {
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  if (total(seen) < total(clean.writes))
    found(
      F.INCOMPLETE_AFTER_THROW,
      "broken",
      `${total(seen)} writes took effect with the retry, a clean apply makes ${total(clean.writes)}: the retry skipped a write (a gap between two writes the probe cannot see)`,
    );
  const dedup = run.kind.targetDedup?.(spec, run.opened.context) === true;
  for (const method of ["POST", "PATCH"]) {
    const n = seen.get(method) ?? 0;
    const c = clean.writes.get(method) ?? 0;
    if (n > c)
      found(
        F.REPEATED_WRITE_AFTER_THROW,
        dedup ? "note" : "broken",
        `${n} ${method} requests took effect with the retry, a clean apply makes ${c}${dedup ? " (the kind says the target absorbs a repeat)" : ""}`,
      );
  }
}

const describe = (e: unknown): string =>
  (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).slice(0, 300);
