import { isIdemError } from "@idem/schema";
import type { RecordResult } from "../../port/outputs.js";
import type { PostgresConnection } from "./connection.js";
import { announceWork } from "./notify.js";
import { type RecordRequest, recordOutput } from "./record.js";
import { recordBatch } from "./record-batch.js";

/** How records are combined: statements in flight at once, records and body bytes per batch. */
export interface RecordQueueLimits {
  /** Record statements in flight at once, each on a connection of its own (default 1). */
  flights?: number;
  /** Records in one batch (default 64). */
  maxRecords?: number;
  /** Body bytes (UTF-16 units) in one batch, exceeded only by a batch of one (default 1 MiB). */
  maxBytes?: number;
}

type Waiting = {
  request: RecordRequest;
  resolve: (result: RecordResult) => void;
  reject: (error: unknown) => void;
};

/**
 * Group commit of a PostgreSQL journal's records: many concurrent callers share one statement,
 * one round trip and one COMMIT (`recordBatch`), where each alone would wait for a commit of its
 * own (a WAL flush each, and one lock holder at a time on a shared target).
 *
 * A record that arrives while fewer than `flights` record statements are in flight goes alone, as
 * `recordOutput`, at the end of the current tick (`process.nextTick`: after the promise callbacks
 * now queued, before any I/O), so a lone writer waits for nothing, while the callers that one
 * answered batch sets going again in the same tick go together, not one alone and the rest
 * behind it. Records that arrive while the statements are full wait, and go together, in arrival
 * order, in the next statement that starts, up to `maxRecords` and `maxBytes`; two records of one
 * job ID never share a statement nor are in flight at once (the later waits for the next), so each
 * batch's inserts have distinct keys. One flight by default: on two cores a second statement in
 * flight measured no faster, and with one, run ids follow output seqs across batches too.
 *
 * Each caller gets the answer `recordOutput` would give it, only after the COMMIT holding its row
 * returned, and a recorded one only after the work was announced (once per statement). When a
 * batch statement fails with UNAVAILABLE (the server is gone, or the answer to its COMMIT was
 * lost) every record of it fails with that error: nothing is answered as written; the caller's
 * retry tells (duplicate). Any other error of a batch statement (a value the server refuses, say)
 * sends each of its records again alone, so that a bad record fails its own caller only.
 */
export class RecordQueue {
  private waiting: Waiting[] = [];
  /** The job IDs of the records in flight. */
  private readonly writing = new Set<string>();
  private inFlight = 0;
  /** Whether a pump is due at the end of this tick. */
  private scheduled = false;
  private readonly flights: number;
  private readonly maxRecords: number;
  private readonly maxBytes: number;

  constructor(
    private readonly c: PostgresConnection,
    limits: RecordQueueLimits = {},
  ) {
    this.flights = limits.flights ?? 1;
    this.maxRecords = limits.maxRecords ?? 64;
    this.maxBytes = limits.maxBytes ?? 1 << 20;
  }

  /** Records `request` alone or in the next batch; answers as `recordOutput` would. */
  record(request: RecordRequest): Promise<RecordResult> {
    return new Promise<RecordResult>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      process.nextTick(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  /** Starts statements while there are free flights and waiting records that may go. */
  private pump(): void {
    while (this.inFlight < this.flights) {
      const batch = this.take();
      if (batch.length === 0) return;
      this.inFlight++;
      void this.write(batch)
        // Not expected (settle answers every record), but a caller is never left waiting.
        .catch((e: unknown) => {
          for (const w of batch) w.reject(e);
        })
        .finally(() => {
          this.inFlight--;
          for (const w of batch) this.writing.delete(w.request.output.jobId);
          this.pump();
        });
    }
  }

  /** The next batch, in arrival order: no job ID in flight or twice, within the limits. */
  private take(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    let bytes = 0;
    let full = false;
    for (const w of this.waiting) {
      const jobId = w.request.output.jobId;
      const size = w.request.body.length;
      full ||=
        batch.length >= this.maxRecords || (batch.length > 0 && bytes + size > this.maxBytes);
      if (full || this.writing.has(jobId)) {
        rest.push(w);
        continue;
      }
      batch.push(w);
      this.writing.add(jobId);
      bytes += size;
    }
    this.waiting = rest;
    return batch;
  }

  /**
   * Writes one batch and answers its callers. Resolves once its statement (and any retry alone)
   * is done, so the next may start; the announcement is not waited for here.
   */
  private async write(batch: Waiting[]): Promise<void> {
    const settled = await this.settle(batch.map((w) => w.request));
    const recorded = settled.some((s) => s.status === "fulfilled" && s.value.status === "recorded");
    const announced = recorded ? announceWork(this.c, "runs") : Promise.resolve();
    batch.forEach((w, i) => {
      const s = settled[i] as PromiseSettledResult<RecordResult>;
      if (s.status === "rejected") w.reject(s.reason);
      else if (s.value.status !== "recorded") w.resolve(s.value);
      else announced.then(() => w.resolve(s.value), w.reject);
    });
  }

  /** Each record's result: alone as today, or in one batch statement (alone again on its error). */
  private async settle(requests: RecordRequest[]): Promise<PromiseSettledResult<RecordResult>[]> {
    const alone = () => Promise.allSettled(requests.map((r) => recordOutput(this.c, r)));
    if (requests.length === 1) return alone();
    try {
      return await recordBatch(this.c, requests);
    } catch (e) {
      if (isIdemError(e, "UNAVAILABLE"))
        return requests.map(() => ({ status: "rejected", reason: e }));
      // Not the server gone: maybe one record the server refuses. Alone, it fails its caller only.
      return alone();
    }
  }
}
