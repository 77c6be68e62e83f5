import { isIdemError } from "@idem/schema";

type Waiting<R, A> = { request: R; resolve: (answer: A) => void; reject: (error: unknown) => void };

/** How one kind of write is grouped: alone, as a batch, and which requests may not share one. */
export interface GroupCommitWrites<R, A> {
  /** One request in its own statement (a batch of one, and each request of a failed batch). */
  alone(request: R): Promise<A>;
  /** Several requests in one statement: one settled answer per request, in order. */
  batch(requests: R[]): Promise<PromiseSettledResult<A>[]>;
  /** Requests with one key never share a statement nor are in flight at once. */
  keyOf(request: R): string;
  /** Requests in one batch at most (default 64). */
  maxBatch?: number;
  /** A request's size, for `maxSize` (default none). */
  sizeOf?(request: R): number;
  /** The size of a batch at most, exceeded only by a batch of one (default none). */
  maxSize?: number;
  /** Statements in flight at once, each on a connection of its own (default 1). */
  flights?: number;
  /**
   * What a statement's answers call for once, before some of them are given: `start` runs once the
   * statement is done (undefined: nothing to do), and an answer `waits` says so is given after it.
   */
  follow?: {
    start(settled: PromiseSettledResult<A>[]): Promise<void> | undefined;
    waits(answer: A): boolean;
  };
}

/**
 * Group commit of one kind of write across the callers a process has in flight (a record, a
 * settle, a completion): a request that arrives while fewer than `flights` statements of its kind
 * are in flight goes at the end of the tick (`process.nextTick`: after the promise callbacks now
 * queued, before any I/O), with those that arrived in the same tick; requests that arrive while
 * the statements are full wait and go together, in arrival order, in the next statement that
 * starts: one round trip and one COMMIT for all. Each caller is answered as its own statement
 * would answer it, once the COMMIT holding its write returned. A batch statement that fails with
 * UNAVAILABLE fails every request of it (nothing is answered as written); any other error sends
 * each request again alone, so that one the server refuses fails its own caller only.
 */
export class GroupCommit<R, A> {
  private waiting: Waiting<R, A>[] = [];
  /** The keys of the requests in flight. */
  private readonly writing = new Set<string>();
  private inFlight = 0;
  /** Whether a pump is due at the end of this tick. */
  private scheduled = false;

  constructor(private readonly writes: GroupCommitWrites<R, A>) {}

  /** Writes `request` alone or with others; answers as `alone(request)` would. */
  submit(request: R): Promise<A> {
    return new Promise<A>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      process.nextTick(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  /** Starts statements while there are free flights and waiting requests that may go. */
  private pump(): void {
    while (this.inFlight < (this.writes.flights ?? 1)) {
      const batch = this.take();
      if (batch.length === 0) return;
      this.inFlight++;
      void this.write(batch)
        // Not expected (every request is answered), but a caller is never left waiting.
        .catch((e: unknown) => {
          for (const w of batch) w.reject(e);
        })
        .finally(() => {
          this.inFlight--;
          for (const w of batch) this.writing.delete(this.writes.keyOf(w.request));
          this.pump();
        });
    }
  }

  /** The next batch in arrival order: no key in flight or twice, within the limits. */
  private take(): Waiting<R, A>[] {
    const { maxBatch = 64, maxSize = Number.POSITIVE_INFINITY, sizeOf } = this.writes;
    const batch: Waiting<R, A>[] = [];
    const rest: Waiting<R, A>[] = [];
    let size = 0;
    let full = false;
    for (const w of this.waiting) {
      const key = this.writes.keyOf(w.request);
      const own = sizeOf?.(w.request) ?? 0;
      full ||= batch.length >= maxBatch || (batch.length > 0 && size + own > maxSize);
      if (full || this.writing.has(key)) {
        rest.push(w);
        continue;
      }
      batch.push(w);
      this.writing.add(key);
      size += own;
    }
    this.waiting = rest;
    return batch;
  }

  /**
   * Writes one batch and answers its callers. Resolves once its statement (and any retry alone) is
   * done, so the next may start; what `follow` starts is not waited for here.
   */
  private async write(batch: Waiting<R, A>[]): Promise<void> {
    const settled = await this.settle(batch.map((w) => w.request));
    const { follow } = this.writes;
    const after = follow?.start(settled);
    batch.forEach((w, i) => {
      const s = settled[i] as PromiseSettledResult<A>;
      if (s.status === "rejected") w.reject(s.reason);
      else if (after === undefined || !follow?.waits(s.value)) w.resolve(s.value);
      else after.then(() => w.resolve(s.value), w.reject);
    });
  }

  /** Each request's answer: alone, or in one batch statement (alone again on its error). */
  private async settle(requests: R[]): Promise<PromiseSettledResult<A>[]> {
    const alone = () => Promise.allSettled(requests.map((r) => this.writes.alone(r)));
    if (requests.length === 1) return alone();
    try {
      return await this.writes.batch(requests);
    } catch (e) {
      if (isIdemError(e, "UNAVAILABLE"))
        return requests.map(() => ({ status: "rejected", reason: e }));
      // Not the server gone: maybe one request the server refuses. Alone, it fails its caller only.
      return alone();
    }
  }
}
