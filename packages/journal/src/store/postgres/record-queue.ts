import type { RecordResult } from "../../port/outputs.js";
import type { PostgresConnection } from "./connection.js";
import { GroupCommit } from "./group-commit.js";
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
  private readonly queue: GroupCommit<RecordRequest, RecordResult>;

  constructor(c: PostgresConnection, limits: RecordQueueLimits = {}) {
    this.queue = new GroupCommit({
      alone: (request) => recordOutput(c, request),
      batch: (requests) => recordBatch(c, requests),
      keyOf: (request) => request.output.jobId,
      maxBatch: limits.maxRecords ?? 64,
      sizeOf: (request) => request.body.length,
      maxSize: limits.maxBytes ?? 1 << 20,
      flights: limits.flights ?? 1,
      // New work is announced once per statement that recorded some; those callers hear after it.
      follow: {
        start: (settled) =>
          settled.some((s) => s.status === "fulfilled" && s.value.status === "recorded")
            ? announceWork(c, "runs")
            : undefined,
        waits: (result) => result.status === "recorded",
      },
    });
  }

  /** Records `request` alone or in the next batch; answers as `recordOutput` would. */
  record(request: RecordRequest): Promise<RecordResult> {
    return this.queue.submit(request);
  }
}
