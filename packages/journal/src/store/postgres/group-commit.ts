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
}

/**
 * Group commit of one kind of write under a lease (a settle, a completion) across the runs a
 * process has in flight, as `RecordQueue` does for records: a request that arrives while no
 * statement of its kind is in flight goes at the end of the tick, with those that arrived in the
 * same tick; requests that arrive meanwhile wait and go together in the next statement, one round
 * trip and one COMMIT for all. Each caller is answered as its own statement would answer it, once
 * the COMMIT holding its write returned. A batch statement that fails with UNAVAILABLE fails every
 * request of it (nothing is answered as written); any other error sends each request again alone,
 * so that one the server refuses fails its own caller only.
 */
export class GroupCommit<R, A> {
  private waiting: Waiting<R, A>[] = [];
  private readonly writing = new Set<string>();
  private inFlight = false;
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

  private pump(): void {
    if (this.inFlight) return;
    const batch = this.take();
    if (batch.length === 0) return;
    this.inFlight = true;
    void this.write(batch)
      .catch((e: unknown) => {
        for (const w of batch) w.reject(e);
      })
      .finally(() => {
        this.inFlight = false;
        for (const w of batch) this.writing.delete(this.writes.keyOf(w.request));
        this.pump();
      });
  }

  /** The next batch in arrival order: no key in flight or twice, at most `maxBatch`. */
  private take(): Waiting<R, A>[] {
    const max = this.writes.maxBatch ?? 64;
    const batch: Waiting<R, A>[] = [];
    const rest: Waiting<R, A>[] = [];
    for (const w of this.waiting) {
      const key = this.writes.keyOf(w.request);
      if (batch.length >= max || this.writing.has(key)) {
        rest.push(w);
        continue;
      }
      batch.push(w);
      this.writing.add(key);
    }
    this.waiting = rest;
    return batch;
  }

  private async write(batch: Waiting<R, A>[]): Promise<void> {
    const requests = batch.map((w) => w.request);
    const alone = () => Promise.allSettled(requests.map((r) => this.writes.alone(r)));
    let settled: PromiseSettledResult<A>[];
    if (requests.length === 1) settled = await alone();
    else {
      try {
        settled = await this.writes.batch(requests);
      } catch (e) {
        settled = isIdemError(e, "UNAVAILABLE")
          ? requests.map(() => ({ status: "rejected", reason: e }))
          : await alone();
      }
    }
    batch.forEach((w, i) => {
      const s = settled[i] as PromiseSettledResult<A>;
      if (s.status === "fulfilled") w.resolve(s.value);
      else w.reject(s.reason);
    });
  }
}
