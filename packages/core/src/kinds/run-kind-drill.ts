import { randomBytes } from "node:crypto";
import {
  DRILL_BLIND_SPOTS,
  DRILL_FINDINGS,
  DRILL_VERDICTS,
  type DrillCheck,
  type DrillFinding,
  type DrillKey,
  type DrillVerdict,
  type KindDrillReport,
  type KindGuarantee,
  verdictWords,
} from "@idem/kit";
import {
  type Clock,
  type Config,
  describeError,
  IdemError,
  isIdemError,
  systemClock,
} from "@idem/schema";
import { openEffects } from "../effects/open-effects.js";
import { checkSamples, checkTarget } from "./drill-checks.js";
import { type CrashPhase, crashPhase, type DrillInterpret } from "./drill-crashes.js";
import { countKeys, crashFindings } from "./drill-verify.js";
import { createDrillWorkspace, type DrilledKindEntry } from "./drill-workspace.js";

/** What `runKindDrill` drills and how. */
export interface KindDrillOptions {
  /** The config whose targets the drill acts on (aliases, kind sections); its journal is never touched. */
  config: Config;
  /** The kind: its name, its module (null for one of idem's own) and its options. */
  kind: DrilledKindEntry;
  /** Runs one `idem interpreter --once` on the drill's config (the CLI spawns itself). */
  interpret: DrillInterpret;
  /** Outputs recorded for the crash phase (default 6, at most 200). */
  outputs?: number;
  /** Where the temporary workspace is made (default the system's temp folder). */
  parentDir?: string;
  /** Keep the workspace (its config and journal) for a look afterwards. */
  keep?: boolean;
  /** This drill's ID: its job IDs and the base of its sample numbers (default random). */
  id?: string;
  clock?: Clock;
  /** A line of progress, for a person watching (the CLI's stderr). */
  onProgress?: (line: string) => void;
}

/** The default number of outputs of the crash phase. */
export const DRILL_OUTPUTS_DEFAULT = 6;

/**
 * The conformance drill of one effect kind against its real target (docs/effect-kinds.md): its
 * invalid samples are refused naming their field; probe absent, apply, probe present, a second
 * apply changes nothing, a fresh key probed twice changes nothing; then `outputs` outputs recorded
 * in a temporary workspace (its own SQLite journal, a config with the kind registered) and
 * interpreted while the interpreter is SIGKILLed at every interpreter fault point and the kind's
 * own, until the journal drains; then every key counted at the target. The verdict: exactly once
 * in effect, can end uncertain (and after which crashes), or broken (the findings name why).
 * A broken kind is an answer, not an error. The workspace is removed unless `keep`.
 * @throws IdemError INVALID_CONFIG when the kind has no samples, its module or options are refused,
 *   or its config section is missing; INVALID_STATE when the interpreter cannot run the drill's
 *   config at all.
 */
export async function runKindDrill(options: KindDrillOptions): Promise<KindDrillReport> {
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const count = options.outputs ?? DRILL_OUTPUTS_DEFAULT;
  if (!Number.isInteger(count) || count < 1 || count > 200)
    throw new IdemError("INVALID_INPUT", `outputs must be an integer from 1 to 200, got ${count}`, {
      details: { field: "outputs" },
    });
  const id = options.id ?? randomBytes(4).toString("hex");
  const prefix = `drill-${id}`;
  // Far from other drills' samples on the same target (docs: KindSamples.valid).
  const base = (Number.parseInt(id.slice(0, 8), 16) % 1_000_000) * 1000 || 1000;
  const log = options.onProgress ?? (() => {});
  const ws = await createDrillWorkspace(options.config, options.kind, options.parentDir);
  try {
    const kind = ws.registry.get(options.kind.name);
    if (!kind?.samples)
      throw new IdemError(
        "INVALID_CONFIG",
        `kind ${options.kind.name} supplies no samples (samples.valid, samples.invalid): the drill cannot run it`,
        { details: { key: "samples" } },
      );
    if (options.keep) log(`workspace: ${ws.dir}`);
    const findings: DrillFinding[] = [];
    log(`${kind.name}: checking its samples`);
    const { invalid, samples } = checkSamples(kind, ws, base, findings);
    const applied = samples.at(0);
    const fresh = samples.at(1);
    let checks: DrillCheck[] = [];
    let crashes: CrashPhase = {
      outputs: [],
      points: [],
      starts: [],
      after: new Map(),
      drained: true,
    };
    let keys: DrillKey[] = [];
    if (applied && fresh) {
      const effects = openEffects(ws.config, { kinds: ws.registry, clock });
      try {
        if (!effects.probeable(applied)) {
          const dedup = effects.targetDedup(applied);
          findings.push({
            code: DRILL_FINDINGS.UNPROBEABLE_SAMPLES,
            severity: dedup ? "note" : "uncertain",
            message: dedup
              ? "the kind's probe cannot tell for its samples; the target absorbs a repeat under the key, so a crash after an apply applies it again"
              : "the kind's probe cannot tell for its samples: a crash after an apply leaves it uncertain",
          });
        } else {
          log(`${kind.name}: probe, apply, probe, apply again, probe a fresh key`);
          checks = await checkTarget(
            { effects, kind, applied, fresh, prefix, since: startedAt },
            findings,
          );
        }
      } finally {
        // Closed before the interpreter starts: a git target's locks are free for it.
        await effects.close();
      }
      if (findings.some((f) => f.code === DRILL_FINDINGS.TARGET_ERROR)) {
        // A target that fails the checks (unreachable, refusing): no crash phase to learn from.
        log(`${kind.name}: the target failed the checks; no crash phase`);
      } else {
        log(`${kind.name}: ${count} outputs, the interpreter killed at each fault point`);
        crashes = await crashPhase(kind, ws, samples, {
          count,
          prefix,
          interpret: options.interpret,
          log,
        });
        keys = await countedKeys(kind, ws, crashes, startedAt, clock, findings);
        findings.push(...crashFindings(kind, keys, crashes));
      }
    }
    if (kind.guarantee === "uncertain-window")
      findings.push({
        code: DRILL_FINDINGS.DECLARED_UNCERTAIN,
        severity: "uncertain",
        message:
          "its guarantee is uncertain-window: a crash between sending and recording can leave an effect uncertain",
      });
    findings.push(...heldToAccount(kind.guarantee, findings));
    const verdict = verdictOf(findings);
    return {
      kind: kind.name,
      builtIn: ws.registry.isBuiltIn(kind.name),
      module: ws.registry.isBuiltIn(kind.name)
        ? null
        : (ws.config.kinds[kind.name]?.module ?? null),
      guarantee: kind.guarantee,
      shown: shownGuarantee(kind.guarantee, verdict),
      verdict,
      summary: summaryOf(verdict, findings),
      findings,
      samples: { invalid, valid: samples.used },
      checks,
      crashes: { outputs: crashes.outputs.length, points: crashes.points, starts: crashes.starts },
      countedBy: kind.scan ? "scan" : "probe",
      keys,
      counts: {
        once: keys.filter((k) => k.atTarget === "once").length,
        present: keys.filter((k) => k.atTarget === "present").length,
        missing: keys.filter((k) => k.atTarget === "missing").length,
        duplicated: keys.filter((k) => k.atTarget === "duplicated").length,
        uncertain: keys.filter((k) => k.run === "dead" && k.class === "uncertain").length,
        dead: keys.filter((k) => k.run === "dead" && k.class !== "uncertain").length,
      },
      durationMs: clock.now() - startedAt,
      cannotSee: [...DRILL_BLIND_SPOTS],
    };
  } finally {
    await ws.close(options.keep === true);
  }
}

/** Every key counted at the target after the crashes; a target that fails then is a finding. */
async function countedKeys(
  kind: Parameters<typeof countKeys>[0],
  ws: Awaited<ReturnType<typeof createDrillWorkspace>>,
  crashes: CrashPhase,
  startedAt: number,
  clock: Clock,
  findings: DrillFinding[],
): Promise<DrillKey[]> {
  const verify = openEffects(ws.config, { kinds: ws.registry, clock });
  try {
    return await countKeys(kind, verify, ws.journal, crashes, startedAt);
  } catch (e) {
    const code = isIdemError(e) ? e.code : "THROWN";
    findings.push({
      code: DRILL_FINDINGS.TARGET_ERROR,
      severity: "broken",
      message: `counting the keys at the target failed: ${describeError(e)}`.slice(0, 500),
      details: { check: "count", code },
    });
    return [];
  } finally {
    await verify.close();
  }
}

/** Guarantees no crash may leave uncertain: declaring one, a kind must never end uncertain. */
const NEVER_UNCERTAIN: readonly KindGuarantee[] = [
  "exactly-once",
  "exactly-once-in-effect",
  "target-dedup",
];

/**
 * A broken finding when the kind declares a guarantee that never ends uncertain and the drill saw
 * (or the probe admits) effects that can: the kind declares more than the drill showed.
 */
function heldToAccount(declared: KindGuarantee, findings: readonly DrillFinding[]): DrillFinding[] {
  if (!NEVER_UNCERTAIN.includes(declared)) return [];
  if (verdictOf(findings) !== DRILL_VERDICTS.CAN_END_UNCERTAIN) return [];
  return [
    {
      code: DRILL_FINDINGS.GUARANTEE_NOT_SHOWN,
      severity: "broken",
      message: `it declares ${declared}, and the drill showed uncertain-window (effects can end uncertain): declare uncertain-window, or make the probe tell`,
      details: { declared, shown: "uncertain-window" },
    },
  ];
}

/** What the drill showed: the declared guarantee when exactly once, uncertain-window when it can end so. */
function shownGuarantee(declared: KindGuarantee, verdict: DrillVerdict): KindGuarantee | null {
  if (verdict === DRILL_VERDICTS.EXACTLY_ONCE) return declared;
  return verdict === DRILL_VERDICTS.CAN_END_UNCERTAIN ? "uncertain-window" : null;
}

/** broken when any finding is; else can-end-uncertain when any finding is uncertain; else exactly once. */
export function verdictOf(findings: readonly DrillFinding[]): DrillVerdict {
  if (findings.some((f) => f.severity === "broken")) return DRILL_VERDICTS.BROKEN;
  if (findings.some((f) => f.severity === "uncertain")) return DRILL_VERDICTS.CAN_END_UNCERTAIN;
  return DRILL_VERDICTS.EXACTLY_ONCE;
}

/** The verdict in words with its reasons: `broken: duplicated-at-target, absent-after-apply`. */
function summaryOf(verdict: DrillVerdict, findings: readonly DrillFinding[]): string {
  const words = verdictWords(verdict);
  if (verdict === DRILL_VERDICTS.EXACTLY_ONCE) return words;
  const weight = verdict === DRILL_VERDICTS.BROKEN ? "broken" : "uncertain";
  const reasons = findings.filter((f) => f.severity === weight).map((f) => f.message);
  return `${words}: ${reasons.join("; ")}`;
}
