import type { Lease } from "./runs.js";

/**
 * What a run awaiting a person asks for (docs/approvals.md): the output's digest (its content hash,
 * sha256 of its canonical JSON), the effects (indexes in the output) that need the approval, the
 * rules that matched them, and when the request expires.
 */
export interface ApprovalRequest {
  digest: string;
  effects: number[];
  rules: string[];
  expiresAt: number;
}

/**
 * A person's decision on a run awaiting approval, bound to what they saw: the generation, the
 * output's digest and the effects they approve (all of the request's, or some). `expiresAt` is how
 * long an approval stays usable (ignored for a rejection).
 */
export interface ApprovalDecision {
  jobId: string;
  generation: number;
  approve: boolean;
  digest: string;
  effects: number[];
  actor: string;
  reason: string;
  expiresAt: number;
}

/** A run awaiting a decision, with its request and when it began waiting. */
export interface AwaitingRun {
  jobId: string;
  generation: number;
  agent: string;
  since: number;
  request: ApprovalRequest;
}

/**
 * Approval gates (docs/approvals.md). A request parks a held run (state `awaiting`: no lease, never
 * claimed, its targets kept in order); a decision moves it (pending again, or dead with class
 * `rejected`), each with its event, in one transaction: the decision is durable before the
 * interpreter can claim the run again, let alone apply an approved effect.
 */
export interface JournalApprovals {
  /**
   * Parks the held run awaiting a decision: `awaiting`, lease dropped, due at the request's expiry;
   * event `approval.requested` with the request.
   * @throws LEASE_LOST when the token is stale.
   */
  request(lease: Lease, request: ApprovalRequest): Promise<void>;
  /**
   * Decides an awaiting run: approved, it is pending again, due now (event `approval.granted`);
   * rejected, it ends dead with class `rejected` and the reason (event `approval.rejected`).
   * @throws NOT_FOUND without a run; INVALID_STATE when the latest run is not this generation
   *   awaiting, its request expired, or the digest or effects are not those requested (details
   *   `{ field }`: `digest`, `effects`, `generation`); INVALID_INPUT for a blank reason.
   */
  decide(decision: ApprovalDecision): Promise<void>;
  /**
   * Ends the awaiting runs whose request expired (dead, class `rejected`, event `approval.expired`);
   * answers their job IDs.
   */
  expire(): Promise<string[]>;
  /** The runs awaiting a decision, longest waiting first (at most `limit`, default 100). */
  awaiting(limit?: number): Promise<AwaitingRun[]>;
}
