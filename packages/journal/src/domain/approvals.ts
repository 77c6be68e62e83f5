import { IdemError } from "@idem/schema";
import type { ApprovalDecision, ApprovalRequest } from "../port/approvals.js";
import { assertResolutionReason } from "./decisions.js";

/** What a decision is checked against: the latest run of its job and its latest request. */
export interface DecisionSubject {
  run: { generation: number; state: string } | undefined;
  request: ApprovalRequest | undefined;
}

const refuse = (message: string, field: string): never => {
  throw new IdemError("INVALID_STATE", message, { details: { field } });
};

/**
 * Checks a decision against what is awaited, failing closed: the latest run must be this very
 * generation, awaiting, its request not expired; an approval must name the output's digest as
 * recorded and only effects the request named.
 * @throws NOT_FOUND without a run; INVALID_STATE naming the field at fault; INVALID_INPUT for a
 *   blank reason.
 */
export function assertDecidable(d: ApprovalDecision, s: DecisionSubject, now: number): void {
  assertResolutionReason(d.reason);
  const { run, request } = s;
  if (!run) throw new IdemError("NOT_FOUND", `no run for job ${d.jobId}`);
  if (run.generation !== d.generation)
    refuse(
      `the latest run of ${d.jobId} is generation ${run.generation}, not ${d.generation}`,
      "generation",
    );
  if (run.state !== "awaiting" || !request)
    refuse(`the run of ${d.jobId} is ${run.state}, not awaiting an approval`, "state");
  const req = request as ApprovalRequest;
  if (req.expiresAt <= now) refuse(`the approval request of ${d.jobId} expired`, "expiresAt");
  if (d.digest !== req.digest)
    refuse(`the digest does not match the recorded output of ${d.jobId}`, "digest");
  const unknown = d.effects.filter((i) => !req.effects.includes(i));
  if (d.effects.length === 0 || unknown.length > 0)
    refuse(
      `effects ${unknown.join(",") || "(none)"} are not awaiting approval in ${d.jobId} (awaiting: ${req.effects.join(",")})`,
      "effects",
    );
}

/** The request an `approval.requested` event's data holds (written by `request`). */
export function requestOf(data: Record<string, unknown> | null): ApprovalRequest | undefined {
  if (!data) return undefined;
  const { digest, effects, rules, expiresAt } = data;
  if (typeof digest !== "string" || typeof expiresAt !== "number" || !Array.isArray(effects))
    return undefined;
  return {
    digest,
    effects: effects.filter((i): i is number => typeof i === "number"),
    rules: Array.isArray(rules) ? rules.filter((r): r is string => typeof r === "string") : [],
    expiresAt,
  };
}

/** The dead run's error for a rejection or an expiry. */
export const rejectionError = (d: { actor: string; reason: string } | "expired"): string =>
  d === "expired"
    ? "approval expired: nobody decided in time"
    : `rejected by ${d.actor}: ${d.reason}`;
