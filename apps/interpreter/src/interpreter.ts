import { setMaxListeners } from "node:events";
import {
  createApprovalSweep,
  createDeadHolderSweep,
  type InterpretRunContext,
  interpretRun,
  type RunOutcome,
  SupersedeIndex,
  TargetTurns,
} from "@idem/core";
import { APPROVAL_NOTICE_EFFECTS, type Effects, targetsOfEffect } from "@idem/effects";
import { JOURNAL_EVENTS, type JournalStore } from "@idem/journal";
import { createLogger, createOwnerId, type Logger, noopTracing, type Tracing } from "@idem/runtime";
import {
  type Backoff,
  type Clock,
  type Config,
  createBackoff,
  describeError,
  type FaultHook,
  type IdemError,
  isIdemError,
  noFault,
  sleep,
  systemClock,
} from "@idem/schema";
import { createInterpreterMetrics, type InterpreterMetrics } from "./interpreter-metrics.js";
import { outageWatch } from "./outage-watch.js";
import { withPausePoint } from "./pause-point.js";
import { RunPool } from "./run-pool.js";

/** How to build an interpreter; `config`, `journal` and `effects` are required. */
export interface InterpreterOptions {
  config: Config;
  journal: JournalStore;
  effects: Effects;
  clock?: Clock;
  /**
   * The lease owner written to the journal; default `createOwnerId()`, which another interpreter
   * on this host can tell dead (its runs are then taken over at once, not after `leaseMs`).
   */
  owner?: string;
  /** Called at each fault point of docs/reliability.md; the apps wire `IDEM_FAULT` here. No-op by default. */
  fault?: FaultHook;
  /**
   * `<point>[:<n>]`: SIGSTOP this process the n-th time it reaches a fault point (fencing drills);
   * default `IDEM_PAUSE` from the environment, unset: never.
   */
  pause?: string;
  logger?: Logger;
  metrics?: InterpreterMetrics;
  /**
   * Independent runs this process holds at once (`--concurrency N`), each followed by up to
   * `interpreter.pipeline - 1` runs on its targets; the journal's target order keeps them apart.
   */
  concurrency?: number;
  /**
   * `drain()` (`--once`) rides out a journal outage (a PostgreSQL server gone or restarting) as the
   * long-running loops do, and rejects with UNAVAILABLE once the journal has answered nothing for
   * this long; default `DRAIN_OUTAGE_LIMIT_MS` (10 minutes).
   */
  outageLimitMs?: number;
  /**
   * Claim, probe and apply spans continuing the trace kept with each record (`startTelemetry`);
   * default off.
   */
  tracing?: Tracing;
}

/** How long `drain()` waits for a journal that answers nothing before it gives up (10 minutes). */
export const DRAIN_OUTAGE_LIMIT_MS = 10 * 60_000;

/** What `drain()` (`idem interpreter --once`) did. */
export interface DrainResult {
  /** Runs this interpreter ended, by outcome. */
  runs: Record<RunOutcome["outcome"], number>;
  /** Runs that ended dead while draining: by this interpreter, or by its claims at `maxLeaseExpiries`. */
  dead: { jobId: string; generation: number; class: string; error: string }[];
  /** True when a run ended dead: `idem interpreter --once` exits 1. */
  endedDead: boolean;
}

/** A running interpreter: the pool of runs one process holds. */
export interface Interpreter {
  readonly owner: string;
  readonly metrics: InterpreterMetrics;
  /** Claims one due run and interprets it; undefined when no run is due. */
  runOnce(): Promise<RunOutcome | undefined>;
  /**
   * `--once`: works with `concurrency` loops until no run is pending, running or waiting for a
   * retry, waiting out expired leases and retry times. Stops early, releasing its lease, on `stop()`.
   * A journal outage is waited out (claims back off and resume by themselves), up to `outageLimitMs`.
   * @throws the journal's failure when it can no longer make a write durable; UNAVAILABLE when the
   * journal answered nothing for `outageLimitMs`.
   */
  drain(): Promise<DrainResult>;
  /** The long-running form: claims as runs end, polling at `interpreter.pollMs`, until `stop()`. */
  start(): void;
  /**
   * Finishes the effect in progress in every loop, releases their leases and resolves when the
   * loops have ended. Idempotent.
   */
  stop(): Promise<void>;
  /**
   * Resolves with the journal's failure when the journal can no longer make a write durable (see
   * `JournalStore.failure`): the loops have stopped claiming (`drain()` rejects with it), the runs
   * held are left to their lease expiry, and the process must stop and be restarted. Pending while
   * healthy.
   */
  readonly fatal: Promise<IdemError>;
}

/**
 * Creates the interpreter: the process that claims runs from the journal and applies each output's
 * effects once, probing the target first (see `interpretRun` for the crash safety of one run).
 * Up to `concurrency` independent runs share the process, each with up to `interpreter.pipeline - 1`
 * runs following it on its targets (see RunPool and TargetTurns). A claim that fails because the journal is briefly unavailable is retried after
 * `interpreter.pollMs`; a journal that failed for good stops every loop (`fatal`).
 */
export function createInterpreter(options: InterpreterOptions): Interpreter {
  const { config, journal } = options;
  const settings = config.interpreter;
  const clock = options.clock ?? systemClock;
  const owner = options.owner ?? createOwnerId();
  const log = (options.logger ?? createLogger({ name: "idem-interpreter" })).child({ owner });
  const metrics = options.metrics ?? createInterpreterMetrics();
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
  const outageLimitMs = options.outageLimitMs ?? DRAIN_OUTAGE_LIMIT_MS;
  /** Aborted on `stop()` or when the journal fails for good: loops end, sleeps wake. */
  const stopController = new AbortController();
  const stopSignal = stopController.signal;
  // Every run of the pool may wait on it at once (its turn on a target), beside the idle wait.
  setMaxListeners(concurrency * settings.pipeline + 10, stopSignal);
  const context: InterpretRunContext = {
    journal,
    effects: options.effects,
    settings,
    clock,
    fault: withPausePoint(options.fault ?? noFault, options.pause ?? process.env.IDEM_PAUSE),
    log,
    metrics,
    supersede: new SupersedeIndex(journal, options.effects.kinds),
    stopSignal,
    approvals: config.approvals,
    tracing: options.tracing ?? noopTracing,
    targetOf: (spec) => targetsOfEffect(spec, options.effects.kinds)[0],
  };

  const deadHolders = createDeadHolderSweep({ holders: journal.runs, clock, self: owner });
  const record = { config, kinds: options.effects.kinds, effects: APPROVAL_NOTICE_EFFECTS };
  const sweepOf = { journal, clock, settings: config.approvals, nats: config.nats, log, record };
  const approvals = createApprovalSweep(sweepOf);
  /**
   * Before a claim, at most every DEAD_HOLDER_SWEEP_MS: ends the leases of holders provably dead on
   * this host (a SIGKILLed interpreter), so the claim takes their runs over at once; and the
   * approval requests that expired, with the notices of runs awaiting approval (ApprovalSweep).
   */
  async function sweepDeadHolders(): Promise<void> {
    await approvals.sweep();
    const swept = await deadHolders.sweep();
    if (swept && swept.expired > 0) {
      log.warn(
        { event: "interpreter.dead-holders", owners: swept.owners, leases: swept.expired },
        "the holders of runs are dead on this host: taking their runs over",
      );
    }
  }

  let loops: Promise<void> | undefined;
  let onFatal: (e: IdemError) => void = () => {};
  const fatal = new Promise<IdemError>((resolve) => {
    onFatal = resolve;
  });

  /**
   * True when the journal has failed for good (a failed fsync): no claim or write can succeed in
   * this process again. The first call stops every loop and resolves `fatal`.
   */
  function journalFailed(): boolean {
    const failure = journal.failure;
    if (!failure) return false;
    if (!stopSignal.aborted) {
      log.error(
        { event: "interpreter.journal-failed", err: describeError(failure) },
        "the journal can no longer make writes durable: stopping; restart this process",
      );
      stopController.abort();
      onFatal(failure);
    }
    return true;
  }

  async function runOnce(): Promise<RunOutcome | undefined> {
    // When the claim was asked for: where the run's claim span starts (wall time, as spans are).
    const claimedAt = Date.now();
    await sweepDeadHolders();
    const claim = await journal.runs.claim({
      owner,
      leaseMs: settings.leaseMs,
      maxLeaseExpiries: settings.maxLeaseExpiries,
    });
    return claim && interpretRun(claim, context, claimedAt);
  }

  /** The claims' backoff while the journal is UNAVAILABLE (a PostgreSQL server gone or restarting). */
  const newOutageBackoff = () =>
    createBackoff({
      initialMs: Math.min(settings.pollMs, 250),
      maxMs: Math.max(settings.pollMs, 5_000),
    });

  /**
   * A claim (or a journal read of the loop) failed: an UNAVAILABLE journal stops this loop
   * claiming for a growing backoff and it tries again by itself; anything else (SQLite busy beyond
   * its timeout) waits a poll. Runs held when the journal went away are left to their leases:
   * a write under a lease taken over meanwhile is refused (LEASE_LOST).
   */
  async function claimFailed(e: unknown, outage: Backoff): Promise<void> {
    if (isIdemError(e, "UNAVAILABLE")) {
      const delay = outage.next();
      log.warn(
        { event: "interpreter.journal-unavailable", err: describeError(e), retryInMs: delay },
        "the journal is unavailable: not claiming; retrying",
      );
      await sleep(delay, stopSignal);
      return;
    }
    log.warn({ err: describeError(e) }, "claim failed; retrying");
    await sleep(settings.pollMs, stopSignal);
  }

  const newTally = (): Record<RunOutcome["outcome"], number> => ({
    done: 0,
    failed: 0,
    dead: 0,
    released: 0,
    "lease-lost": 0,
    awaiting: 0,
  });

  /** The runs of this process: claimed into a pool, the pipeline's turns kept between them. */
  function newPool(): RunPool {
    const turns = new TargetTurns();
    return new RunPool({
      concurrency,
      pipeline: settings.pipeline,
      turns,
      claim: (follow) =>
        journal.runs.claim({
          owner,
          leaseMs: settings.leaseMs,
          maxLeaseExpiries: settings.maxLeaseExpiries,
          ...(follow ? { follow } : {}),
        }),
      interpret: (claim, claimedAt) => interpretRun(claim, { ...context, turns }, claimedAt),
    });
  }

  /** A run of the pool threw, against `interpretRun`'s word: logged, its lease left to expire. */
  const runThrew = (e: unknown) =>
    log.error({ err: describeError(e) }, "interpreting a run failed unexpectedly");

  /**
   * Nothing more to claim now: waits for a run of the pool to end, and while the pool has room,
   * for new work too (`idle`), whichever comes first.
   */
  async function waitForRoom(pool: RunPool): Promise<void> {
    if (pool.full) return pool.settled();
    if (pool.size === 0) return idle(stopSignal);
    const done = new AbortController();
    try {
      await Promise.race([pool.settled(), idle(AbortSignal.any([stopSignal, done.signal]))]);
    } finally {
      done.abort();
    }
  }

  async function drain(): Promise<DrainResult> {
    const startedAt = clock.now();
    const runs = newTally();
    const deadRuns: DrainResult["dead"] = [];
    const outage = outageWatch(outageLimitMs, log);
    const pool = newPool();
    const ended = { outcome: (o: RunOutcome) => runs[o.outcome]++, error: runThrew };
    const pump = async () => {
      const backoff = newOutageBackoff();
      while (!stopSignal.aborted) {
        if (journalFailed()) return;
        let claiming = true;
        try {
          await sweepDeadHolders();
          await pool.fill(ended);
          outage.answered();
          backoff.reset();
          claiming = false;
          if (pool.size === 0) {
            const active = await journal.runs.active();
            if (active.pending + active.running + active.failed === 0) return;
          }
          await waitForRoom(pool);
        } catch (e) {
          if (journalFailed()) return;
          // A drain rides out an outage as the long-running loops do, up to `outageLimitMs`; a
          // read between claims that fails otherwise ends the drain, as it always did.
          if (!claiming && !isIdemError(e, "UNAVAILABLE")) throw e;
          if (outage.exceeded(e)) {
            stopController.abort();
            return;
          }
          await claimFailed(e, backoff);
        }
      }
    };
    loops = pump().finally(() => pool.drained());
    await loops;
    await approvals.close(); // its NATS connection would keep a one-shot process alive
    const failure = journal.failure;
    if (failure) throw failure;
    if (outage.gaveUp) throw outage.gaveUp;
    // Runs that ended dead here: by this interpreter's own decisions or by its claims (maxLeaseExpiries).
    const backoff = newOutageBackoff();
    let events: Awaited<ReturnType<typeof journal.events.list>>;
    for (;;) {
      try {
        events = await journal.events.list({
          type: JOURNAL_EVENTS.RUN_DEAD,
          since: startedAt - 1000,
        });
        break;
      } catch (e) {
        if (!isIdemError(e, "UNAVAILABLE")) throw e;
        if (outage.exceeded(e)) throw outage.gaveUp;
        await claimFailed(e, backoff);
      }
    }
    for (const ev of events) {
      if (ev.actor !== owner || ev.jobId === null) continue;
      deadRuns.push({
        jobId: ev.jobId,
        generation: Number(ev.data?.generation ?? 0),
        class: String(ev.data?.class ?? ""),
        error: String(ev.data?.error ?? ""),
      });
    }
    return { runs, dead: deadRuns, endedDead: deadRuns.length > 0 };
  }

  /**
   * Nothing to claim: waits until the next retry is due, `pollMs` at the latest, and sooner when
   * the journal announces a new run (PostgreSQL's NOTIFY of a record or replay from any host).
   */
  async function idle(signal: AbortSignal): Promise<void> {
    const due = await journal.runs.nextDueAt();
    const wait = due === undefined ? settings.pollMs : due - clock.now();
    const ms = Math.min(settings.pollMs, Math.max(5, wait));
    if (journal.waitForWork) await journal.waitForWork("runs", ms, signal);
    else await sleep(ms, signal);
  }

  function start(): void {
    if (loops !== undefined) return;
    const pool = newPool();
    const ended = { outcome: () => {}, error: runThrew };
    const pump = async () => {
      const outage = newOutageBackoff();
      while (!stopSignal.aborted) {
        if (journalFailed()) return;
        try {
          await sweepDeadHolders();
          await pool.fill(ended);
          outage.reset();
          await waitForRoom(pool);
        } catch (e) {
          if (journalFailed()) return;
          await claimFailed(e, outage);
        }
      }
    };
    log.info(
      { event: "interpreter.started", concurrency, pipeline: settings.pipeline },
      "interpreter started",
    );
    loops = pump().finally(() => pool.drained());
  }

  let stopping: Promise<void> | undefined;
  /** Idempotent: a second call (a second signal) waits for the first and logs nothing more. */
  function stop(): Promise<void> {
    stopping ??= (async () => {
      stopController.abort();
      await loops;
      await approvals.close();
      log.info({ event: "interpreter.stopped" }, "interpreter stopped");
    })();
    return stopping;
  }

  return { owner, metrics, runOnce, drain, start, stop, fatal };
}
