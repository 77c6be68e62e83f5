import type { AnyEffectKind, DrillStart } from "@idem/kit";
import { type EffectSpec, effectKey, FAULT_POINTS, IdemError } from "@idem/schema";
import { recordOutput } from "../record/record-output.js";
import type { DrillSamples } from "./drill-checks.js";
import type { DrillWorkspace } from "./drill-workspace.js";

/** One start of `idem interpreter --once` on the drill's config, armed at a fault point or not. */
export interface DrillInterpretRun {
  configFile: string;
  /** `IDEM_FAULT` for this start (`interpreter.after-apply:1`); null: none (set it empty). */
  fault: string | null;
}

/** How that start ended. */
export interface DrillInterpretResult {
  code: number | null;
  signal: string | null;
  /** The end of its stderr, for a message when it failed. */
  stderr: string;
}

/**
 * Runs one interpreter process to its end: the caller's (the CLI spawns `idem interpreter --once`
 * of itself), so @idem/core starts no process.
 */
export type DrillInterpret = (run: DrillInterpretRun) => Promise<DrillInterpretResult>;

/** One recorded output of the crash phase: its job, its one effect's key and spec. */
export interface DrillOutput {
  jobId: string;
  key: string;
  spec: EffectSpec;
}

/** What the crash phase did. */
export interface CrashPhase {
  outputs: DrillOutput[];
  points: string[];
  starts: DrillStart[];
  /** For each job whose run ended dead: the fault point of the kill that last left it half done. */
  after: Map<string, string | null>;
  /** Whether the journal drained (no pending, running or failed run left). */
  drained: boolean;
}

/** idem's own interpreter fault points, in the order the drill arms them (the git ones last). */
const INTERPRETER_POINTS = [
  FAULT_POINTS.INTERPRETER_AFTER_CLAIM,
  FAULT_POINTS.INTERPRETER_AFTER_INTENT,
  FAULT_POINTS.INTERPRETER_AFTER_APPLY,
  FAULT_POINTS.INTERPRETER_AFTER_EFFECT_RECORD,
  FAULT_POINTS.INTERPRETER_BEFORE_DONE,
];

/** Clean starts after the kills before the drill says the journal did not drain. */
const CLEAN_STARTS = 3;

/**
 * Phase three: records `count` outputs of one effect each (valid samples from 2 on), then starts
 * the interpreter once armed at each fault point (idem's, then the kind's own, then
 * `interpreter.after-branch-move` and `interpreter.after-push`, reached by local and remote git
 * targets only), each killed by SIGKILL the first
 * time it reaches its point, with one more output recorded before a start that would find no
 * effect untouched; then clean starts until it drains. Notes which kill left each run that ended
 * dead half done.
 * @throws IdemError INVALID_STATE when an output cannot be recorded or a start fails for a reason
 *   of its own (exit 2: a refused config or IDEM_FAULT), with the end of its stderr.
 */
export async function crashPhase(
  kind: AnyEffectKind,
  ws: DrillWorkspace,
  samples: DrillSamples,
  options: { count: number; prefix: string; interpret: DrillInterpret; log(line: string): void },
): Promise<CrashPhase> {
  const { journal } = ws;
  const outputs: DrillOutput[] = [];
  const record = async () => {
    const j = outputs.length;
    const spec = samples.at(2 + j);
    if (spec === undefined) return false;
    const jobId = `${options.prefix}-${j}`;
    const r = await recordOutput({
      journal,
      config: ws.config,
      kinds: ws.registry,
      output: { jobId, agent: "drill", effects: [spec] },
      source: "drill",
    });
    if (r.status !== "recorded")
      throw new IdemError("INVALID_STATE", `the drill could not record ${jobId}: ${r.status}`);
    outputs.push({ jobId, key: effectKey(jobId, 0), spec });
    return true;
  };
  for (let j = 0; j < options.count; j++) if (!(await record())) break;
  if (outputs.length === 0)
    return { outputs, points: [], starts: [], after: new Map(), drained: true };

  const points = [
    ...INTERPRETER_POINTS,
    ...(kind.faultPoints ?? []),
    FAULT_POINTS.INTERPRETER_AFTER_BRANCH_MOVE,
    FAULT_POINTS.INTERPRETER_AFTER_PUSH,
  ];
  const starts: DrillStart[] = [];
  const after = new Map<string, string | null>();
  // The kill that last left each run half done (running under a lease no process holds).
  const killedIn = new Map<string, string>();
  const active = async () => {
    const a = await journal.runs.active();
    return a.pending + a.running + a.failed;
  };
  /** Per job: its run's lease, and its effect's ledger rows, as a start found them. */
  const leases = async () => {
    const out = new Map<string, { lease: string; ledger: string }>();
    for (const o of outputs) {
      const run = await journal.runs.latest(o.jobId);
      out.set(o.jobId, {
        lease: `${run?.generation}:${run?.leaseOwner}:${run?.leaseUntil}`,
        ledger: JSON.stringify(await journal.ledger.history(o.key)),
      });
    }
    return out;
  };
  const start = async (point: string | null) => {
    const before = await leases();
    const r = await options.interpret({
      configFile: ws.configFile,
      fault: point === null ? null : `${point}:1`,
    });
    const killed = r.signal === "SIGKILL";
    if (!killed && r.code !== 0 && r.code !== 1)
      throw new IdemError(
        "INVALID_STATE",
        `the interpreter ended with ${r.signal ?? `exit ${r.code}`}: ${tail(r.stderr)}`,
      );
    starts.push({ point, killed, exitCode: r.code, signal: r.signal });
    options.log(
      point === null
        ? `  interpreter drained (exit ${r.code})`
        : `  interpreter armed at ${point}: ${killed ? "killed there" : `not reached (exit ${r.code})`}`,
    );
    for (const o of outputs) {
      if (after.has(o.jobId)) continue;
      const run = await journal.runs.latest(o.jobId);
      if (run?.state === "dead") after.set(o.jobId, killedIn.get(o.jobId) ?? null);
      // Running under a lease this start took: the kill left it half done. A start that took it
      // over and was killed before it wrote anything of it (killed at another run's point) leaves
      // it as the earlier kill did, and that one keeps the blame.
      else if (
        killed &&
        point !== null &&
        run?.state === "running" &&
        before.get(o.jobId)?.lease !== `${run.generation}:${run.leaseOwner}:${run.leaseUntil}` &&
        (!killedIn.has(o.jobId) ||
          before.get(o.jobId)?.ledger !== JSON.stringify(await journal.ledger.history(o.key)))
      )
        killedIn.set(o.jobId, point);
    }
  };
  // An effect no start has touched yet: what an armed start needs to reach a point inside an
  // apply (an intended one may have been applied before its kill, and is then only probed).
  const untouched = async () => {
    for (const o of outputs) {
      const run = await journal.runs.latest(o.jobId);
      if (run?.state === "done" || run?.state === "dead") continue;
      const rows = await journal.ledger.history(o.key);
      if (!rows.some((r) => r.generation === run?.generation)) return true;
    }
    return false;
  };
  for (const point of points) {
    if (!(await untouched()) && !(await record())) break;
    await start(point);
  }
  for (let i = 0; i < CLEAN_STARTS && (await active()) > 0; i++) await start(null);
  return { outputs, points, starts, after, drained: (await active()) === 0 };
}

const tail = (text: string) => text.trim().split("\n").slice(-3).join(" | ").slice(0, 800);
