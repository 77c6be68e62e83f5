import type { RunOutcome, TargetTurns } from "@idem/core";
import type { Claim, ClaimOptions } from "@idem/journal";

/** Hears how each run of a pool ended. */
export interface RunEnded {
  outcome(outcome: RunOutcome): void;
  error(e: unknown): void;
}

/** How a pool claims and interprets its runs. */
export interface RunPoolOptions {
  /** Runs held at once that follow no other run of the pool (`--concurrency`). */
  concurrency: number;
  /** Runs held at once per such run, itself included (`interpreter.pipeline`; 1: no followers). */
  pipeline: number;
  turns: TargetTurns;
  /** One claim from the journal (`follow` as ClaimOptions says). @throws the journal's errors */
  claim(follow: ClaimOptions["follow"]): Promise<Claim | undefined>;
  /** Interprets one claimed run (never throws: see `interpretRun`); `claimedAt` is when it was asked for. */
  interpret(claim: Claim, claimedAt: number): Promise<RunOutcome>;
}

/**
 * The runs one interpreter process holds at once: up to `concurrency` runs that follow no other run
 * of the pool, and with `pipeline` > 1 the runs that follow them on their targets (claimed with
 * `follow`), `concurrency × pipeline` in all. Every claimed run is interpreted at once; the runs
 * that share a target take their turns there in recording order (TargetTurns).
 */
export class RunPool {
  private readonly running = new Map<number, Promise<RunOutcome>>();
  private readonly heads = new Set<number>();
  /** Resolved (and dropped) when a run ends: one promise however many waits share it. */
  private ending: { promise: Promise<void>; resolve: () => void } | undefined;
  private seq = 0;

  constructor(private readonly options: RunPoolOptions) {}

  /** Runs held now. */
  get size(): number {
    return this.running.size;
  }

  /** True when no more runs may be claimed until one ends. */
  get full(): boolean {
    return this.size >= this.options.concurrency * this.options.pipeline;
  }

  /**
   * Claims and starts runs until the pool is full or none is due; `ended` hears how each ends (or
   * what it threw, against `interpretRun`'s word).
   * @throws the claim's error (the runs started before it go on)
   */
  async fill(ended: RunEnded): Promise<void> {
    const { concurrency, pipeline } = this.options;
    while (!this.full) {
      const follow = pipeline === 1 ? undefined : this.heads.size < concurrency ? "also" : "only";
      const claimedAt = Date.now();
      const claim = await this.options.claim(follow);
      if (!claim) return;
      this.start(claim, claimedAt, ended);
    }
  }

  private start(claim: Claim, claimedAt: number, ended: RunEnded): void {
    const id = ++this.seq;
    const runId = claim.run.id;
    const follows = this.options.turns.join(
      { id: runId, token: claim.lease.token },
      claim.run.targets,
    );
    if (!follows) this.heads.add(id);
    const run = this.options.interpret(claim, claimedAt).finally(() => {
      this.running.delete(id);
      this.heads.delete(id);
      this.ending?.resolve();
      this.ending = undefined;
    });
    this.running.set(id, run);
    run.then(ended.outcome, ended.error);
  }

  /** Resolves when one of the runs held now ends (never when none is held). */
  settled(): Promise<void> {
    if (!this.ending) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.ending = { promise, resolve };
    }
    return this.ending.promise;
  }

  /** Resolves once every run held has ended (those claimed meanwhile included). */
  async drained(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }
}
