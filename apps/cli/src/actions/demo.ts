import { appendFileSync } from "node:fs";
import { buildAudit, isAuditClean, openEffects } from "@idem/core";
import { type JournalStore, openJournalStore } from "@idem/journal";
import { FAULT_POINTS, type FaultPoint, journalLocationOf, sleep } from "@idem/schema";
import { CliError, color, EXIT, exitHolder, loadConfig, printJson } from "../context.js";
import { DEMO_TOPICS } from "../demo/demo-agents.js";
import { createDemoWorkspace, type DemoWorkspace } from "../demo/demo-workspace.js";
import { printEffectSummary, summarizeEffects } from "../demo/effect-summary.js";
import { invokedAs, shellWord } from "../ops/invoked-as.js";
import { type IdemChild, spawnIdem } from "../ops/supervisor.js";
import { printAudit } from "../render/print-audit.js";

type Role = "executor" | "interpreter";

const POINTS: Record<Role, FaultPoint[]> = {
  executor: [FAULT_POINTS.EXECUTOR_AFTER_RUN, FAULT_POINTS.EXECUTOR_AFTER_RECORD],
  interpreter: [
    FAULT_POINTS.INTERPRETER_AFTER_CLAIM,
    FAULT_POINTS.INTERPRETER_AFTER_INTENT,
    FAULT_POINTS.INTERPRETER_AFTER_APPLY,
    FAULT_POINTS.INTERPRETER_AFTER_EFFECT_RECORD,
    FAULT_POINTS.INTERPRETER_BEFORE_DONE,
  ],
};

interface DemoOptions {
  dir?: string;
  jobs: string;
  crashes: string;
  seed?: string;
  timeout: string;
  json?: boolean;
}

/** A small seeded PRNG (mulberry32), so a run can be repeated with --seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `idem demo`, imported when it runs (its options and help: commands/demo.ts). */
export async function runDemoCommand(opts: DemoOptions): Promise<void> {
  const jobs = positive(opts.jobs, "--jobs");
  const crashes = Number(opts.crashes);
  if (!Number.isInteger(crashes) || crashes < 0)
    throw new CliError("--crashes must be 0 or more", EXIT.USAGE);
  const seed = opts.seed === undefined ? Date.now() % 1_000_000 : positive(opts.seed, "--seed");
  const timeoutMs = positive(opts.timeout, "--timeout") * 1000;
  const started = Date.now();
  const ws = createDemoWorkspace(opts.dir);
  const say = (line: string) => {
    const t = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
    process.stderr.write(`${color.dim(t)}  ${line}\n`);
  };
  say(`workspace ${color.bold(ws.dir)} (seed ${seed})`);
  say(`  git repo repos/site, outbox/, agents ${ws.agents.join(", ")}; logs in demo.log`);
  const config = loadConfig({ config: ws.config });
  // The demo's workspace is its own, made just now: it creates its journal, as idem init does.
  const journal = await openJournalStore(journalLocationOf(config), { create: true });
  try {
    const result = await runDemo(ws, journal, { jobs, crashes, seed, timeoutMs, say });
    const effects = openEffects(config);
    const report = await buildAudit(config, journal, effects).finally(() => effects.close());
    const clean = isAuditClean(report);
    const totalEffects = result.effects;
    const onTarget = totalEffects - report.drift.length;
    // Each effect once, by its first run and its final state: the audit's counts are events over
    // both generations (the replay's "present" as well), which added up to more than the effects.
    const effectStates = await summarizeEffects(journal);
    if (opts.json) {
      printJson({ workspace: ws.dir, seed, ...result, effectStates, audit: report, clean });
    } else {
      // The way the user runs this idem: `idem` installed, `npx idem` in the clone, else its path.
      const idem = invokedAs();
      process.stdout.write(printEffectSummary(effectStates));
      process.stdout.write(
        clean
          ? `audit: ${report.targets.map((t) => `${t.target} (${t.keys} keys)`).join(", ") || "no git target"} scanned; no effect key twice at its target, no drift: ${color.green("clean")}\n`
          : printAudit(report),
      );
      process.stdout.write(
        `${clean ? color.green("demo done") : color.red("demo NOT clean")}: ${jobs} jobs, ${report.outputs} outputs, ` +
          `${onTarget}/${totalEffects} effects at their targets, each key once; ` +
          `${report.duplicates.length} duplicates; ${result.kills.executor + result.kills.interpreter} crashes ` +
          `(executor ${result.kills.executor}, interpreter ${result.kills.interpreter}); ${((Date.now() - started) / 1000).toFixed(1)} s\n` +
          `${afterApplyLine(result)}\n` +
          `look around: git -C ${shellWord(ws.repo)} log --oneline | head\n` +
          `             export IDEM_CONFIG=${shellWord(ws.config)}; ${idem} status; ${idem} replay --all --dry-run\n`,
      );
    }
    if (!clean || report.outputs !== jobs) exitHolder.code = EXIT.INVARIANT;
  } finally {
    await journal.close();
  }
}

/** What the summary says of the crashes between an apply and its record. */
function afterApplyLine(r: DemoResult): string {
  if (r.kills.executor + r.kills.interpreter === 0) return "no crash (--crashes 0)";
  if (r.crashesAfterApply === 0 || r.presentAfterCrash === 0)
    return `${r.crashesAfterApply} crash(es) between an apply and its record; no effect was left applied but unrecorded`;
  return `${r.crashesAfterApply} crash(es) between an apply and its record: the next interpreter probed, found ${r.presentAfterCrash} effect(s) already at their target, and did not send them again`;
}

function positive(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new CliError(`${name} must be a positive integer`, EXIT.USAGE);
  return n;
}

interface DemoResult {
  effects: number;
  kills: Record<Role, number>;
  crashPoints: string[];
  /** Effects an interpreter found at their target after a crash (applied, then killed before recording). */
  presentAfterCrash: number;
  /** Crashes between an apply and its record (`interpreter.after-apply`). */
  crashesAfterApply: number;
  replay: string;
}

async function runDemo(
  ws: DemoWorkspace,
  journal: JournalStore,
  o: { jobs: number; crashes: number; seed: number; timeoutMs: number; say: (l: string) => void },
): Promise<DemoResult> {
  const { say } = o;
  const random = prng(o.seed);
  const log = (name: string, line: string) => appendFileSync(ws.log, `[${name}] ${line}\n`);

  let effects = 0;
  for (let i = 0; i < o.jobs; i++) {
    const agent = ws.agents[i % ws.agents.length] as string;
    const n = i + 1;
    await journal.jobs.enqueue(
      {
        jobId: `demo-${String(n).padStart(3, "0")}-${agent}`,
        agent,
        input: { topic: DEMO_TOPICS[i % DEMO_TOPICS.length] ?? "idem", n },
      },
      { actor: "demo" },
    );
    effects += agent === "writer" ? 1 : 2;
  }
  say(`enqueued ${o.jobs} jobs on the embedded queue (${effects} effects to come)`);

  const kills: Record<Role, number> = { executor: 0, interpreter: 0 };
  const crashPoints: string[] = [];
  let crashesLeft = o.crashes;
  // The schedule: until an effect was found present after a crash, every interpreter start is
  // armed at its first apply (interpreter.after-apply:1), so the demo always shows a crash between
  // an apply and its record and the next interpreter's probe finding the effect already there;
  // every other crash falls at a point and hit count drawn from the seed.
  let presentSeen = false;
  let finished = false;
  const children = new Map<Role, IdemChild>();
  const loops: Promise<void>[] = [];
  let failure: string | undefined;

  const run = async (role: Role) => {
    while (!finished) {
      let fault: string | undefined;
      // Arm every start while crashes are left, at a random point and hit count: a process started
      // unarmed would run to the end, and the crashes would stop there.
      if (crashesLeft > 0 && role === "interpreter" && !presentSeen) {
        fault = `${FAULT_POINTS.INTERPRETER_AFTER_APPLY}:1`;
      } else if (crashesLeft > (role === "executor" && !presentSeen ? 1 : 0)) {
        // The last crash left is kept for the interpreter until one was found present.
        const points = POINTS[role];
        const point = points[Math.floor(random() * points.length)] as string;
        fault = `${point}:${1 + Math.floor(random() * 4)}`;
      }
      const args = role === "executor" ? ["executor", "--no-api"] : ["interpreter"];
      const child = spawnIdem(role, args, {
        config: ws.config,
        cwd: ws.dir,
        env: { IDEM_LOG_LEVEL: "info", ...(fault ? { IDEM_FAULT: fault } : { IDEM_FAULT: "" }) },
        onLine: (name, line) => log(name, line),
      });
      children.set(role, child);
      const { code, signal } = await child.exited;
      children.delete(role);
      if (finished) return;
      if (signal === "SIGKILL") {
        kills[role] += 1;
        crashesLeft -= 1;
        crashPoints.push(fault ?? "SIGKILL");
        say(`${color.red("✗ killed")} ${role} at ${fault ?? "?"} (SIGKILL); restarting it`);
      } else {
        failure = `${role} exited unexpectedly (${signal ?? `code ${code}`}); see ${ws.log}`;
        return;
      }
    }
  };
  say("running executor and interpreter as child processes, killing them at fault points");
  loops.push(run("executor"), run("interpreter"));

  const deadline = Date.now() + o.timeoutMs;
  let lastLine = "";
  let lastAt = 0;
  while (!failure) {
    const s = await journal.status();
    if (s.effects.present > 0) presentSeen = true;
    const active = s.runs.pending + s.runs.running + s.runs.failed;
    const line = `${s.outputs}/${o.jobs} outputs recorded, ${s.runs.done} runs done, ${s.effects.applied} effects applied`;
    if (line !== lastLine && s.outputs > 0 && Date.now() - lastAt >= 2000) {
      lastLine = line;
      lastAt = Date.now();
      say(color.dim(line));
    }
    if (s.jobs.queued + s.jobs.running === 0 && active === 0 && s.outputs + s.deadLetters >= o.jobs)
      break;
    if (Date.now() > deadline) {
      failure = `not drained after ${o.timeoutMs / 1000} s; see ${ws.log}`;
      break;
    }
    await sleep(150);
  }
  finished = true;
  for (const c of children.values()) c.child.kill("SIGTERM");
  await Promise.all(loops);
  if (failure) throw new CliError(`demo failed: ${failure}`, EXIT.FAILED);
  const drained = await journal.status();
  say(
    `${color.green("drained")}: every job recorded once, every run done${drained.effects.present > 0 ? `; ${drained.effects.present} effect(s) found already at their target after a crash, not applied again` : ""}`,
  );

  const reason = "demo: every effect once more, to show a replay finds them present";
  say(`replaying everything once more: idem replay --all --yes --now --reason '${reason}'`);
  const plan: string[] = [];
  const replay = spawnIdem("replay", ["replay", "--all", "--yes", "--now", "--reason", reason], {
    config: ws.config,
    cwd: ws.dir,
    env: { IDEM_LOG_LEVEL: "warn", IDEM_FAULT: "" },
    onLine: (name, line, stream) => {
      log(name, line);
      if (stream === "stdout") plan.push(line);
    },
  });
  const r = await replay.exited;
  if (r.code !== 0) throw new CliError(`demo failed: replay exited ${r.code}; see ${ws.log}`);
  const summary = /plan: .*/.exec(plan.join("\n"))?.[0] ?? "";
  say(`  ${summary.replace(/\x1b\[[0-9;]*m/g, "")}`);
  return {
    effects,
    kills,
    crashPoints,
    presentAfterCrash: drained.effects.present,
    crashesAfterApply: crashPoints.filter((p) =>
      p.startsWith(`${FAULT_POINTS.INTERPRETER_AFTER_APPLY}:`),
    ).length,
    replay: summary,
  };
}
