import { IdemError } from "@idem/schema";
import type { JobLease } from "../port/jobs.js";
import type { Lease } from "../port/runs.js";

/**
 * Lease arithmetic and checks that need no SQL. A lease is held while its row is running under its
 * very token: a stale holder (taken over, released, ended) changes nothing and is told so.
 */

/** When a lease taken or extended at `now` for `leaseMs` ends. */
export const leaseEnd = (now: number, leaseMs: number): number => now + leaseMs;

/** Whether a row (run or job) is held under `token`: running, with that very lease token. */
export const holds = (
  row: { state: string; lease_token: string | null } | undefined,
  token: string,
): boolean => row?.state === "running" && row.lease_token === token;

/** The error a stale holder of a run's lease gets (LEASE_LOST). */
export const runLeaseLost = (lease: Lease, state: string | undefined): IdemError =>
  new IdemError(
    "LEASE_LOST",
    `the lease on run ${lease.jobId}#${lease.generation} was taken over or ended`,
    { details: { jobId: lease.jobId, generation: lease.generation, state } },
  );

/** The error a stale holder of a job delivery's claim gets (LEASE_LOST). */
export const jobLeaseLost = (lease: JobLease, state: string | undefined): IdemError =>
  new IdemError("LEASE_LOST", `the claim on job ${lease.jobId} was taken over or ended`, {
    details: { jobId: lease.jobId, state },
  });
