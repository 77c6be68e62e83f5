import { createInterface } from "node:readline/promises";
import {
  buildReplayPlan,
  checkEffectFilter,
  createReplayRuns,
  describeFilter,
  type EffectFilter,
  kindsOf,
  openEffects,
  replayReason,
} from "@idem/core";
import { createInterpreter, type DrainResult } from "@idem/interpreter";
import type { JournalStore, ReplaySelection } from "@idem/journal";
import { createLogger, startTelemetry, type Tracing } from "@idem/runtime";
import { type Config, isIdemError } from "@idem/schema";
import cliProgress from "cli-progress";
import type { Command } from "commander";
import {
  actorOf,
  CliError,
  color,
  EXIT,
  exitHolder,
  loadConfigWithKinds,
  openConfiguredJournal,
  printJson,
  table,
} from "../context.js";
import { withExistingJournal } from "../ops/existing-journal.js";
import { sinceOption, stateOption } from "../options.js";
import { planJson, printPlan } from "../render/print-plan.js";

interface ReplayOptions {
  job?: string[];
  agent?: string;
  since?: string;
  state?: string;
  all?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  now?: boolean;
  forceUnprobeable?: boolean;
  actor?: string;
  reason?: string;
  kind?: string[];
  repo?: string[];
  root?: string[];
  target?: string[];
  json?: boolean;
}

/** What the replay will do, checked before anything is read or recorded. */
interface ReplayRequest {
  selection: ReplaySelection;
  only: EffectFilter | null;
  reason: string | undefined;
}

/** `idem replay`, imported when it runs (its options and help: commands/replay.ts). */
export async function runReplay(opts: ReplayOptions, cmd: Command): Promise<void> {
  const config = await loadConfigWithKinds(cmd.optsWithGlobals());
  const request = requestOf(opts, config);
  const { selection, only } = request;
  const force = opts.forceUnprobeable ?? false;
  const effects = openEffects(config);
  try {
    if (opts.dryRun) {
      const plan = await withExistingJournal(config, (journal) =>
        buildReplayPlan({ journal, effects, selection, forceUnprobeable: force, only }),
      );
      if (opts.json) printJson(planJson(plan));
      else process.stdout.write(printPlan(plan, true));
      return;
    }
    const journal = await openConfiguredJournal(config);
    // Off unless telemetry.otlpUrl or OTEL_EXPORTER_OTLP_ENDPOINT is set: the replay's spans
    // (and, with --now, the interpretation's) join each output's own trace.
    const tracing = startTelemetry({
      config,
      service: "idem-replay",
      logger: replayLogger(),
      shutdownTimeoutMs: 2_000,
    });
    try {
      await replay({ config, journal, effects, tracing }, request, opts);
    } finally {
      await journal.close();
      await tracing.shutdown();
    }
  } finally {
    await effects.close();
  }
}

/**
 * The selection, the effect filter and the reason, refused (exit 2, naming the option) when they
 * can never succeed: no selection, an unknown kind, repo, root or target, a replay without a reason.
 */
function requestOf(opts: ReplayOptions, config: Config): ReplayRequest {
  const selection = selectionOf(opts);
  try {
    const only = checkEffectFilter(
      {
        ...(opts.kind && { kinds: opts.kind }),
        ...(opts.repo && { repos: opts.repo }),
        ...(opts.root && { roots: opts.root }),
        ...(opts.target && { targets: opts.target }),
      },
      kindsOf(config),
    );
    const reason = opts.dryRun ? opts.reason : replayReason(opts.reason);
    return { selection, only, reason };
  } catch (e) {
    if (isIdemError(e, "INVALID_INPUT")) throw new CliError(e.message, EXIT.USAGE);
    throw e;
  }
}

function selectionOf(opts: ReplayOptions): ReplaySelection {
  const s: ReplaySelection = {
    ...(opts.job !== undefined && { jobIds: opts.job }),
    ...(opts.agent !== undefined && { agent: opts.agent }),
    ...(opts.since !== undefined && { since: sinceOption(opts.since) as number }),
    ...(opts.state !== undefined && { state: stateOption(opts.state) }),
    ...(opts.all && { all: true }),
  };
  if (Object.keys(s).length === 0) {
    throw new CliError(
      "choose what to replay: --job J..., --agent A, --since T, --state S or --all",
      EXIT.USAGE,
    );
  }
  return s;
}

/** What a confirmed replay works with: the config, its journal and targets, and the tracing. */
interface ReplaySession {
  config: Config;
  journal: JournalStore;
  effects: ReturnType<typeof openEffects>;
  tracing: Tracing;
}

async function replay(
  session: ReplaySession,
  request: ReplayRequest,
  opts: ReplayOptions,
): Promise<void> {
  const { journal, effects, tracing } = session;
  const force = opts.forceUnprobeable ?? false;
  const planNow = () =>
    buildReplayPlan({
      journal,
      effects,
      selection: request.selection,
      forceUnprobeable: force,
      only: request.only,
    });
  const say = (text: string) => (opts.json ? process.stderr : process.stdout).write(text);
  let plan = await planNow();
  if (opts.now && plan.busy.length > 0) {
    // A selected output whose run still waits (a `dlq resolve` leaves the run pending for an
    // interpreter): with --now that run is interpreted here first, then the replay is planned again.
    say(
      `${plan.busy.length} selected output(s) have a run in progress: interpreting what is due here first\n`,
    );
    await driveNow(session, plan.busy.length);
    plan = await planNow();
  }
  say(printPlan(plan, false));
  if (plan.jobIds.length === 0) {
    if (plan.busy.length > 0) {
      // Nothing replayed because every selected output is still being interpreted elsewhere, or
      // waits for an interpreter that is not running: say so, never a silent success.
      say(
        `nothing was sent: every selected output still has a run in progress (${plan.busy.slice(0, 5).join(", ")}); ${opts.now ? "another interpreter holds it" : "it waits for an interpreter (idem interpreter, or run this again with --now)"}; run this replay again once idem show JOB says it is done or dead\n`,
      );
      exitHolder.code = EXIT.FAILED;
    }
    if (opts.json) printJson({ ...planJson(plan), created: [] });
    return;
  }
  if (!opts.yes) await confirmReplay(plan.jobIds.length);
  const actor = actorOf(opts.actor);
  const created = await createReplayRuns(journal, plan, {
    actor,
    ...(request.reason !== undefined && { reason: request.reason }),
    forceUnprobeable: force,
    tracing,
  });
  const scope = plan.only ? `, only ${describeFilter(plan.only)}` : "";
  say(
    `created ${created.length} run generation(s)${force ? " with --force-unprobeable" : ""}${scope} (actor ${actor}, reason ${JSON.stringify(request.reason)})\n`,
  );
  let drained: DrainResult | undefined;
  if (opts.now) {
    drained = await driveNow(session, created.length);
    const done = drained.runs.done;
    say(`interpreted here: ${done} run(s) done, ${drained.dead.length} dead\n`);
    if (drained.endedDead) {
      exitHolder.code = EXIT.FAILED;
      const rows = drained.dead.map((d) => [d.jobId, d.generation, d.class, d.error]);
      process.stderr.write(
        `${color.red("runs ended dead")}; see idem dlq ls\n${table(["job", "gen", "class", "error"], rows)}\n`,
      );
    }
  } else {
    say(
      "a running interpreter (idem interpreter or idem up) will apply them; follow with idem status\n",
    );
  }
  if (opts.json) {
    printJson({
      ...planJson(plan),
      created: created.map((r) => ({
        jobId: r.jobId,
        generation: r.generation,
        replaysGeneration: r.replay?.replaysGeneration ?? r.generation - 1,
      })),
      lineage: {
        actor,
        reason: request.reason ?? null,
        selection: plan.selection,
        only: plan.only,
      },
      ...(drained && { drained: { runs: drained.runs, dead: drained.dead } }),
    });
  }
}

/**
 * Asks on the terminal before a replay creates `count` run generations.
 * @throws CliError (exit 1) without a terminal to ask on, or when not confirmed
 */
async function confirmReplay(count: number): Promise<void> {
  if (!process.stdin.isTTY) {
    throw new CliError(
      "refusing to replay without confirmation: no terminal to ask on; pass --yes to confirm in a script",
      EXIT.FAILED,
    );
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const answer = await rl.question(`create a new run generation for ${count} output(s)? [y/N] `);
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) {
    throw new CliError("not confirmed: nothing changed", EXIT.FAILED);
  }
}

/** Runs the interpreter in this process until nothing is due, with a progress bar on stderr. */
async function driveNow(session: ReplaySession, total: number): Promise<DrainResult> {
  const { config, journal, effects, tracing } = session;
  const interpreter = createInterpreter({
    config,
    journal,
    effects,
    logger: createLogger({
      name: "idem-interpreter",
      level: process.env.IDEM_LOG_LEVEL ?? "warn",
    }),
    tracing,
  });
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: "interpreting [{bar}] {value}/{total} runs | {eta_formatted} left",
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  const tick = setInterval(() => {
    void journal.runs.active().then(
      (a) => bar.update(Math.max(0, total - (a.pending + a.running + a.failed))),
      () => {},
    );
  }, 200);
  const onSignal = () => {
    void interpreter.stop();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await interpreter.drain();
  } finally {
    clearInterval(tick);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    const a = await journal.runs.active();
    bar.update(Math.max(0, total - (a.pending + a.running + a.failed)));
    bar.stop();
  }
}

/** The replay's own log lines (telemetry's): warnings only, unless IDEM_LOG_LEVEL says more. */
function replayLogger() {
  return createLogger({ name: "idem-replay", level: process.env.IDEM_LOG_LEVEL ?? "warn" });
}
