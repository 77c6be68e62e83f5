import type { ApplyOrder, ApplyTicket } from "@idem/effects";
import { IdemError } from "@idem/schema";

/** One effect's place among the runs an interpreter holds at once on its target. */
export interface EffectTurn {
  /** What its apply follows (set by `take`), and the hand-over once it is queued (its run's last effect there). */
  readonly order: ApplyOrder;
  /**
   * True when its probe may run before its turn: the target queues applies (a git branch), so
   * an absent answer stays good while the earlier runs' applies are still queued.
   */
  readonly early: boolean;
  /**
   * Waits for the effect's turn (at once for a run's later effects on the target).
   * @throws IdemError ORDER_BLOCKED when an earlier run ended first, or the interpreter stops.
   */
  take(): Promise<void>;
  /**
   * Waits until the earlier runs' applies on the target have landed there (the turn taken too).
   * @throws IdemError ORDER_BLOCKED as `take`.
   */
  landed(): Promise<void>;
  /** Its queued apply failed: the later runs wait for this one again. */
  reopen(): void;
}

/** A run's turn on one target, shared by its effects there: taken once, with what it follows. */
export interface RunTurn {
  taken: boolean;
  after?: ApplyTicket | undefined;
}

/**
 * One claim of a run: its id (runs are ordered by it: recording order) and its lease token. A run
 * this interpreter held and lost, then claimed again, is a new claim: what its old claim does
 * after that (hand over, leave) must not touch the new one's place.
 */
export interface HeldRun {
  id: number;
  token: string;
}

/** One held run's place on one ordering target. */
interface Place {
  runId: number;
  /** The lease token of the claim that holds the place. */
  token: string;
  /**
   * open: the run may still act on the target. handed: it is past its last effect there (`ticket`:
   * its apply still queued at the target, which a later apply follows). blocked: it ended first.
   */
  state: "open" | "handed" | "blocked";
  ticket?: ApplyTicket | undefined;
}

/**
 * The order between the runs one interpreter holds at once on each ordering target (its pipeline):
 * a run acts on a target only when every earlier run it holds there has handed the target over,
 * either settled there or with its apply queued at the target (a git branch's push or batch) under
 * a ticket the later apply follows. A run that ends before handing a target over blocks the later
 * ones there: they give their runs back, and the journal keeps them behind it.
 */
export class TargetTurns {
  private readonly lines = new Map<string, Place[]>();
  private readonly waiters = new Map<string, (() => void)[]>();

  /**
   * A claimed run takes its place on each target (a place an earlier claim of the same run left
   * is taken over: the journal says this claim holds the run now); true when it follows a run held
   * here.
   */
  join(run: HeldRun, targets: readonly string[]): boolean {
    const runId = run.id;
    let follows = false;
    for (const target of targets) {
      const line = this.lines.get(target) ?? [];
      this.lines.set(target, line);
      const at = line.findIndex((p) => p.runId >= runId);
      const place: Place = { runId, token: run.token, state: "open" };
      if (at < 0) line.push(place);
      else if (line[at]?.runId === runId) line[at] = place;
      else line.splice(at, 0, place);
      if (line[0] !== place) follows = true;
    }
    return follows;
  }

  /**
   * Waits until every earlier run on `target` has handed it over (`landed`: with no apply of theirs
   * still queued there); answers the ticket of the latest apply still queued there (the run's first
   * apply on the target follows it), if any. Answers at once when `signal` aborts: the caller
   * checks it.
   * @throws IdemError ORDER_BLOCKED when an earlier run ended without handing the target over.
   */
  async turn(
    runId: number,
    target: string,
    signal: AbortSignal,
    landed = false,
  ): Promise<ApplyTicket | undefined> {
    for (;;) {
      let after: ApplyTicket | undefined;
      let ready = true;
      for (const p of this.lines.get(target) ?? []) {
        if (p.runId >= runId) break;
        if (p.state === "blocked") {
          throw new IdemError(
            "ORDER_BLOCKED",
            `run ${p.runId} on ${target} ended before its effects there: this run waits behind it`,
          );
        }
        // A failed ticket: its run is about to try again (or to end), so wait for it.
        if (
          p.state === "open" ||
          p.ticket?.state === "failed" ||
          (landed && p.ticket?.state === "queued")
        ) {
          ready = false;
          break;
        }
        if (p.ticket?.state === "queued") after = p.ticket;
      }
      if (ready || signal.aborted) return after;
      await this.changed(target, signal);
    }
  }

  /**
   * The turn of one of a run's effects on `target`. `held` is the run's turn there, shared by all
   * its effects on the target: the first of them to apply (or to wait for `landed`) waits for it,
   * and its apply follows the earlier runs' latest queued apply. `last` (the run's last effect
   * there) hands the target over as soon as its apply is queued.
   */
  effectTurn(
    run: HeldRun,
    target: string,
    held: RunTurn,
    where: { last: boolean; early: boolean },
    signal: AbortSignal,
  ): EffectTurn {
    const order: ApplyOrder = {};
    if (where.last) order.queued = (ticket) => this.handOver(run, target, ticket);
    const wait = async (landed: boolean) => {
      const after = await this.turn(run.id, target, signal, landed);
      if (signal.aborted) throw new IdemError("ORDER_BLOCKED", "the interpreter is stopping");
      if (!held.taken) held.after = after;
      held.taken = true;
      order.after = held.after;
    };
    return {
      order,
      early: where.early,
      take: () => (held.taken ? Promise.resolve() : wait(false)),
      landed: () => wait(true),
      reopen: () => (where.last ? this.reopen(run, target) : undefined),
    };
  }

  /** The run is past its last effect on `target`: settled there, or queued under `ticket`. */
  handOver(run: HeldRun, target: string, ticket?: ApplyTicket): void {
    this.update(run, target, (p) => {
      p.state = "handed";
      p.ticket = ticket;
    });
  }

  /** The run's queued apply on `target` failed: later runs wait for it again. */
  reopen(run: HeldRun, target: string): void {
    this.update(run, target, (p) => {
      p.state = "open";
      p.ticket = undefined;
    });
  }

  /**
   * The run ended: its places go, the targets it has not handed over stay blocked for the later
   * runs unless it `finished` (done or dead: the journal lets later runs go ahead of it then). A
   * claim that lost its run to a new claim of it (another token) leaves nothing: the place is the
   * new claim's.
   */
  leave(run: HeldRun, finished: boolean): void {
    for (const [target, line] of this.lines) {
      const place = line.find((p) => p.runId === run.id && p.token === run.token);
      if (!place) continue;
      if (finished || place.state === "handed") line.splice(line.indexOf(place), 1);
      else place.state = "blocked";
      // Nothing waits behind a trailing blocked place.
      while (line.at(-1)?.state === "blocked") line.pop();
      if (line.length === 0) this.lines.delete(target);
      this.notify(target);
    }
  }

  private update(run: HeldRun, target: string, change: (p: Place) => void): void {
    const place = this.lines.get(target)?.find((p) => p.runId === run.id && p.token === run.token);
    if (!place) return;
    change(place);
    this.notify(target);
  }

  private notify(target: string): void {
    const waiting = this.waiters.get(target);
    if (!waiting) return;
    this.waiters.delete(target);
    for (const wake of waiting) wake();
  }

  private changed(target: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        signal.removeEventListener("abort", wake);
        resolve();
      };
      signal.addEventListener("abort", wake, { once: true });
      const waiting = this.waiters.get(target) ?? [];
      waiting.push(wake);
      this.waiters.set(target, waiting);
    });
  }
}
