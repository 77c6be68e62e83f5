import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { decideEffect, FileWriteIndex } from "@idem/core";
import type { Effects, ProbeHint } from "@idem/effects";
import type { Claim, EffectRecord, JournalStore } from "@idem/journal";
import {
  type Clock,
  type Config,
  classifyError,
  contentHash,
  describeError,
  type EffectSpec,
  effectKey,
  FAULT_POINTS,
  type FailureClass,
  type FaultHook,
  IdemError,
  isIdemError,
  isRetryableClass,
  noFault,
  systemClock,
} from "@idem/schema";
import type { Logger } from "pino";
import { createInterpreterLogger } from "./interpreter-logger.js";
import { createInterpreterMetrics, type InterpreterMetrics } from "./interpreter-metrics.js";

/** How many times an apply that lost a compare-and-swap (TARGET_MOVED) is re-probed at once before the run fails. */
const MOVED_RETRIES = 3;

export interface InterpreterOptions {
  config: Config;
  journal: JournalStore;
  effects: Effects;
  clock?: Clock;
  /** The lease owner written to the journal; default `<host>:<pid>:<random>`. */
  owner?: string;
  /** Called at each fault point of DESIGN.md; the apps wire `IDEM_FAULT` here. No-op by default. */
  fault?: FaultHook;
  logger?: Logger;
  metrics?: InterpreterMetrics;
  /** Claim loops in this process (`--concurrency N`); the journal's target order keeps them apart. */
  concurrency?: number;
}

/** How one claimed run ended in this interpreter. */
export interface RunOutcome {
  jobId: string;
  generation: number;
  /**
   * done: every effect settled. failed: a retry is scheduled. dead: waits for a human. released:
   * given back on shutdown. lease-lost: another holder took it over; nothing was written.
   */
  outcome: "done" | "failed" | "dead" | "released" | "lease-lost";
  class?: FailureClass;
  error?: string;
}

export interface DrainResult {
  /** Runs this interpreter ended, by outcome. */
  runs: Record<RunOutcome["outcome"], number>;
  /** Runs that ended dead while draining: by this interpreter, or by its claims at `maxLeaseExpiries`. */
  dead: { jobId: string; generation: number; class: string; error: string }[];
  /** True when a run ended dead: `idem interpreter --once` exits 1. */
  endedDead: boolean;
}

export interface Interpreter {
  readonly owner: string;
  readonly metrics: InterpreterMetrics;
  /** Claims one due run and interprets it; undefined when no run is due. */
  runOnce(): Promise<RunOutcome | undefined>;
  /**
   * `--once`: works with `concurrency` loops until no run is pending, running or waiting for a
   * retry, waiting out expired leases and retry times. Stops early, releasing its lease, on `stop()`.
   */
  drain(): Promise<DrainResult>;
  /** The long-running form: claim loops that poll at `interpreter.pollMs` until `stop()`. */
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

/** Why a run stops early: the outcome is already decided and written. */
class RunEnded extends Error {
  override readonly name = "RunEnded";
  constructor(readonly outcome: RunOutcome) {
    super(outcome.outcome);
  }
}

/** An error raised by the target (probe or apply), as opposed to the journal. */
class EffectFailure extends Error {
  override readonly name = "EffectFailure";
  constructor(
    readonly error: unknown,
    readonly unprobeable: boolean,
    readonly dedup: boolean,
  ) {
    super(describeError(error), { cause: error });
  }
}

/**
 * Creates the interpreter: the process that claims runs from the journal and applies each output's
 * effects once, probing the target first.
 *
 * Crash safety: an intent is written before every apply, an effect found `intended` after a crash
 * is probed again (git probes only `base..branch` with the base recorded in the intent), and git
 * applies move the branch by compare-and-swap from the probed base, so a kill at any instant, a
 * second interpreter or a stale lease holder never applies an effect twice (invariants 1 and 5).
 * Every journal write carries the lease token: after a takeover the stale holder gets LEASE_LOST,
 * stops, and writes nothing more.
 */
export function createInterpreter(options: InterpreterOptions): Interpreter {
  const { config, journal, effects } = options;
  const settings = config.interpreter;
  const clock = options.clock ?? systemClock;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const fault = options.fault ?? noFault;
  const log = (options.logger ?? createInterpreterLogger()).child({ owner });
  const metrics = options.metrics ?? createInterpreterMetrics();
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
  const writes = new FileWriteIndex(journal);

  let stopping = false;
  let loops: Promise<void> | undefined;
  const sleepers = new Set<() => void>();
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
    if (!stopping) {
      log.error(
        { event: "interpreter.journal-failed", err: describeError(failure) },
        "the journal can no longer make writes durable: stopping; restart this process",
      );
      stopping = true;
      for (const wake of [...sleepers]) wake();
      onFatal(failure);
    }
    return true;
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopping) return resolve();
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      sleepers.add(done);
    });

  const backoff = (attempts: number): number => {
    const list = settings.backoffMs;
    return list[Math.min(attempts, list.length - 1)] ?? 1000;
  };

  async function interpretRun(claim: Claim): Promise<RunOutcome> {
    const { run, output } = claim;
    const lease = claim.lease;
    const base = { jobId: run.jobId, generation: run.generation };
    const rlog = log.child(base);
    metrics.runs.inc({ outcome: claim.takeover ? "takeover" : "claimed" });
    rlog.info(
      { event: claim.takeover ? "run.takeover" : "run.claimed", attempts: run.attempts },
      "run claimed",
    );
    fault(FAULT_POINTS.INTERPRETER_AFTER_CLAIM);

    // Keep the lease alive while working; a takeover makes the next step stop (and any write fail).
    let lost = false;
    const keeper = setInterval(
      () => {
        journal.extendLease(lease, settings.leaseMs).then(
          () => {},
          (e: unknown) => {
            if (isIdemError(e, "LEASE_LOST")) lost = true;
            else rlog.warn({ err: describeError(e) }, "lease extension failed; will try again");
          },
        );
      },
      Math.max(20, Math.floor(settings.leaseMs / 3)),
    );
    keeper.unref();

    const end = (outcome: RunOutcome): RunOutcome => {
      metrics.runs.inc({ outcome: outcome.outcome });
      const line = { event: `run.${outcome.outcome}`, class: outcome.class, error: outcome.error };
      if (outcome.outcome === "dead" || outcome.outcome === "lease-lost")
        rlog.warn(line, "run ended");
      else rlog.info(line, "run ended");
      return outcome;
    };

    const dead = async (cls: FailureClass, error: string): Promise<never> => {
      await journal.dead(lease, { class: cls, error });
      throw new RunEnded({ ...base, outcome: "dead", class: cls, error });
    };

    try {
      const specs = output.output.effects;
      for (let i = 0; i < specs.length; i++) {
        if (lost) throw new IdemError("LEASE_LOST", `lease on ${run.jobId} was taken over`);
        if (stopping) {
          await journal.release(lease);
          return end({ ...base, outcome: "released" });
        }
        await interpretEffect(i, specs[i] as EffectSpec);
      }
      if (lost) throw new IdemError("LEASE_LOST", `lease on ${run.jobId} was taken over`);
      fault(FAULT_POINTS.INTERPRETER_BEFORE_DONE);
      await journal.complete(lease);
      return end({ ...base, outcome: "done" });
    } catch (e) {
      if (e instanceof RunEnded) return end(e.outcome);
      if (isIdemError(e, "LEASE_LOST")) {
        return end({ ...base, outcome: "lease-lost", class: "infrastructure", error: e.message });
      }
      return end(await failRun(e));
    } finally {
      clearInterval(keeper);
    }

    /** Records a failure of the run: a retry after the backoff, or dead. */
    async function failRun(e: unknown): Promise<RunOutcome> {
      const cause = e instanceof EffectFailure ? e.error : e;
      let cls = classifyError(cause);
      // An unknown outcome on a kind the next attempt can probe or the target deduplicates is only
      // a transient failure: the retry finds out or is absorbed.
      if (cls === "uncertain") cls = "transient";
      const error = describeError(cause);
      try {
        if (isRetryableClass(cls) && run.attempts + 1 < settings.maxAttempts) {
          const nextAt = clock.now() + backoff(run.attempts);
          await journal.fail(lease, { class: cls, error, nextAt });
          return { ...base, outcome: "failed", class: cls, error };
        }
        const why = isRetryableClass(cls)
          ? `${error} (after ${run.attempts + 1} attempts, maxAttempts ${settings.maxAttempts})`
          : error;
        await journal.dead(lease, { class: cls, error: why });
        return { ...base, outcome: "dead", class: cls, error: why };
      } catch (inner) {
        if (isIdemError(inner, "LEASE_LOST")) {
          return { ...base, outcome: "lease-lost", class: "infrastructure", error: inner.message };
        }
        // The journal cannot take the failure either: leave the run to its lease expiry.
        rlog.error({ err: describeError(inner), cause: error }, "cannot record the run's failure");
        return { ...base, outcome: "failed", class: cls, error };
      }
    }

    async function interpretEffect(i: number, spec: EffectSpec): Promise<void> {
      const key = effectKey(run.jobId, i);
      const elog = rlog.child({ key, kind: spec.kind });
      const ledger = await journal.effectHistory(key);
      const current = ledger.find((r) => r.generation === run.generation);
      const supersededBy =
        spec.kind === "file.write" ? await writes.supersededBy(output.seq, spec) : undefined;
      const decision = decideEffect({
        spec,
        key,
        generation: run.generation,
        ledger,
        forceUnprobeable: run.forceUnprobeable,
        effects,
        supersededBy,
      });
      const intent = { key, idx: i, kind: spec.kind, specHash: contentHash(spec) };
      const settled = async (
        state: "applied" | "present" | "skipped",
        detail: Record<string, unknown>,
      ) => {
        await journal.settle(lease, key, state, detail);
        metrics.effects.inc({ kind: spec.kind, outcome: state });
        elog.info({ event: `effect.${state}`, detail }, "effect settled");
        fault(FAULT_POINTS.INTERPRETER_AFTER_EFFECT_RECORD);
      };

      switch (decision.action) {
        case "skip": {
          if (current && isSettled(current)) return; // settled in this generation: nothing to write
          await journal.intend(lease, { ...intent, detail: { reason: decision.reason } });
          fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
          await settled("skipped", { reason: decision.reason });
          return;
        }
        case "uncertain": {
          if (current?.state !== "uncertain") {
            await journal.intend(lease, intent);
            await journal.settle(lease, key, "uncertain", { reason: decision.reason });
            metrics.effects.inc({ kind: spec.kind, outcome: "uncertain" });
          }
          elog.warn({ event: "effect.uncertain", reason: decision.reason }, "effect uncertain");
          await dead("uncertain", `${key}: ${decision.reason}`);
          return;
        }
        case "apply-unprobeable": {
          await journal.intend(lease, intent);
          fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
          const detail = await attempt(() => effects.apply(spec, key), spec);
          fault(FAULT_POINTS.INTERPRETER_AFTER_APPLY);
          await settled("applied", detail);
          return;
        }
        case "probe": {
          let hint = hintOf(current);
          for (let moved = 0; ; moved++) {
            const probed = await attempt(() => effects.probe(spec, key, hint), spec);
            if (probed.status === "present") {
              await journal.intend(lease, { ...intent, detail: probed.detail });
              fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
              await settled("present", probed.detail);
              return;
            }
            if (probed.status === "conflict") {
              await journal.intend(lease, intent);
              await journal.settle(lease, key, "failed", { reason: probed.reason });
              metrics.effects.inc({ kind: spec.kind, outcome: "conflict" });
              elog.warn({ event: "effect.failed", reason: probed.reason }, "effect conflicts");
              await dead("conflict", `${key}: ${probed.reason}`);
              return;
            }
            // Absent. The intent is written after the probe so it can carry the probed base: a crash
            // after this point finds it `intended` with the base and probes only base..branch. The
            // probe changed nothing, so the intent still precedes every change at the target, and
            // writing it re-checks the lease token just before the apply.
            await journal.intend(lease, { ...intent, detail: probed.detail });
            fault(FAULT_POINTS.INTERPRETER_AFTER_INTENT);
            let detail: Record<string, unknown>;
            try {
              detail = await attempt(() => effects.apply(spec, key, probed), spec);
            } catch (e) {
              if (
                e instanceof EffectFailure &&
                isIdemError(e.error, "TARGET_MOVED") &&
                moved < MOVED_RETRIES &&
                !lost
              ) {
                elog.info(
                  { event: "effect.moved", attempt: moved + 1 },
                  "target moved; probing again",
                );
                hint = hintOf({ detail: probed.detail }) ?? hint;
                continue;
              }
              throw e;
            }
            fault(FAULT_POINTS.INTERPRETER_AFTER_APPLY);
            await settled("applied", detail);
            return;
          }
        }
      }

      /** Runs a probe or apply; a target error becomes an EffectFailure, settled `uncertain` or `failed`. */
      async function attempt<T>(op: () => Promise<T>, s: EffectSpec): Promise<T> {
        try {
          return await op();
        } catch (e) {
          const unprobeable = !effects.probeable(s);
          const dedup = effects.targetDedup(s);
          const cls = classifyError(e);
          const error = describeError(e);
          if (cls === "uncertain" && unprobeable && !dedup) {
            await journal.settle(lease, key, "uncertain", { error });
            metrics.effects.inc({ kind: s.kind, outcome: "uncertain" });
            elog.warn({ event: "effect.uncertain", err: error }, "effect outcome unknown");
            await dead("uncertain", `${key}: ${error}`);
          }
          // Only an error that reached the target before the intent (a probe) leaves no row to settle.
          const row = (await journal.effects(run.jobId, run.generation)).find((r) => r.key === key);
          if (row?.state === "intended") {
            await journal.settle(lease, key, "failed", { error, class: cls });
          }
          metrics.effects.inc({ kind: s.kind, outcome: "error" });
          elog.warn({ event: "effect.error", class: cls, err: error }, "effect failed");
          throw new EffectFailure(e, unprobeable, dedup);
        }
      }
    }
  }

  async function claimNext(): Promise<Claim | undefined> {
    return journal.claim({
      owner,
      leaseMs: settings.leaseMs,
      maxLeaseExpiries: settings.maxLeaseExpiries,
    });
  }

  async function runOnce(): Promise<RunOutcome | undefined> {
    const claim = await claimNext();
    return claim && interpretRun(claim);
  }

  const newTally = (): Record<RunOutcome["outcome"], number> => ({
    done: 0,
    failed: 0,
    dead: 0,
    released: 0,
    "lease-lost": 0,
  });

  async function drain(): Promise<DrainResult> {
    const startedAt = clock.now();
    const runs = newTally();
    const deadRuns: DrainResult["dead"] = [];
    const loop = async () => {
      while (!stopping) {
        if (journalFailed()) return;
        let outcome: RunOutcome | undefined;
        try {
          outcome = await runOnce();
        } catch (e) {
          if (journalFailed()) return;
          // The journal is briefly unavailable (busy beyond its timeout): wait a poll and retry.
          log.warn({ err: describeError(e) }, "claim failed; retrying");
          await sleep(settings.pollMs);
          continue;
        }
        if (outcome) {
          runs[outcome.outcome]++;
          continue;
        }
        const active = await journal.activeRuns();
        if (active.pending + active.running + active.failed === 0) return;
        const due = await journal.nextDueAt();
        const wait = due === undefined ? settings.pollMs : due - clock.now();
        await sleep(Math.min(settings.pollMs, Math.max(5, wait)));
      }
    };
    loops = Promise.all(Array.from({ length: concurrency }, loop)).then(() => {});
    await loops;
    const failure = journal.failure;
    if (failure) throw failure;
    // Runs that ended dead here: by this interpreter's own decisions or by its claims (maxLeaseExpiries).
    for (const ev of await journal.events.list({ type: "run.dead", since: startedAt - 1000 })) {
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

  function start(): void {
    if (loops !== undefined) return;
    const loop = async () => {
      while (!stopping) {
        if (journalFailed()) return;
        try {
          if (await runOnce()) continue;
        } catch (e) {
          if (journalFailed()) return;
          log.warn({ err: describeError(e) }, "claim failed; retrying");
        }
        await sleep(settings.pollMs);
      }
    };
    log.info({ event: "interpreter.started", concurrency }, "interpreter started");
    loops = Promise.all(Array.from({ length: concurrency }, loop)).then(() => {});
  }

  async function stop(): Promise<void> {
    stopping = true;
    for (const wake of [...sleepers]) wake();
    await loops;
    log.info({ event: "interpreter.stopped" }, "interpreter stopped");
  }

  return { owner, metrics, runOnce, drain, start, stop, fatal };
}

function isSettled(r: Pick<EffectRecord, "state">): boolean {
  return r.state === "applied" || r.state === "present" || r.state === "skipped";
}

/** The bounded-probe hint stored with an unfinished intent (the git base it probed), if any. */
function hintOf(r: Pick<EffectRecord, "detail"> | undefined): ProbeHint | undefined {
  const b = r?.detail?.base;
  return typeof b === "string" ? { base: b } : undefined;
}
