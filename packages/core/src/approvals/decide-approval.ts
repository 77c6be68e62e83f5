import {
  type ApprovalRequest,
  approvalRequestOf,
  type EventRecord,
  JOURNAL_EVENTS,
  type JournalStore,
} from "@idem/journal";
import { type Clock, type Config, IdemError } from "@idem/schema";

/** A person's decision on a job awaiting approval, as a surface takes it (CLI, API, console, MCP). */
export interface ApprovalInput {
  jobId: string;
  approve: boolean;
  /** Why: required, stored as given. */
  reason: string;
  /** Who decides (`--as`, the OS user, the signed-in operator, the API token's bot). */
  actor: string;
  /** The effects approved (indexes in the output); default every effect the request names. */
  effects?: readonly number[] | undefined;
  /**
   * The output's digest as the person saw it (the console's page carries it); default the
   * recorded output's own. A page shown for another output cannot approve this one.
   */
  digest?: string | undefined;
}

/** What was decided, as written in the journal. */
export interface ApprovalResult {
  jobId: string;
  generation: number;
  decision: "approved" | "rejected";
  digest: string;
  effects: number[];
  actor: string;
  reason: string;
  /** Until when the approval may be used (a rejection: when it was made). */
  expiresAt: number;
}

/** The request a job's generation waits on, from its `approval.requested` events (latest first). */
export function requestIn(
  events: readonly EventRecord[],
  generation: number,
): ApprovalRequest | undefined {
  for (let k = events.length - 1; k >= 0; k--) {
    const data = (events[k] as EventRecord).data;
    if (data?.generation === generation) return approvalRequestOf(data);
  }
  return undefined;
}

/**
 * Approves or rejects the run of `jobId` awaiting a person (docs/approvals.md): the decision is
 * bound to the recorded output's digest, its generation and the effects chosen, and written with
 * its event in one transaction (durable before any approved effect can be applied). An approval
 * is usable for `approvals.expiryMs`; a rejection ends the run dead, class `rejected`.
 * @throws NOT_FOUND for an unknown job; INVALID_STATE when it is not awaiting, its request expired,
 *   or the digest or effects are not those awaited (details `{ field }`); INVALID_INPUT for a blank
 *   reason.
 */
export async function decideApproval(
  journal: JournalStore,
  settings: Pick<Config["approvals"], "expiryMs">,
  clock: Clock,
  input: ApprovalInput,
): Promise<ApprovalResult> {
  const output = await journal.outputs.get(input.jobId);
  if (!output) throw new IdemError("NOT_FOUND", `no output recorded for job ${input.jobId}`);
  const run = await journal.runs.latest(input.jobId);
  if (!run) throw new IdemError("NOT_FOUND", `no run for job ${input.jobId}`);
  if (run.state !== "awaiting")
    throw new IdemError(
      "INVALID_STATE",
      `the run of ${input.jobId} is ${run.state}, not awaiting an approval`,
      { details: { field: "state" } },
    );
  const events = await journal.events.list({
    jobId: input.jobId,
    type: JOURNAL_EVENTS.APPROVAL_REQUESTED,
  });
  const request = requestIn(events, run.generation);
  const effects = [...new Set(input.effects ?? request?.effects ?? [])].sort((a, b) => a - b);
  const expiresAt = clock.now() + settings.expiryMs;
  const decision = {
    jobId: input.jobId,
    generation: run.generation,
    approve: input.approve,
    digest: input.digest ?? output.contentHash,
    effects,
    actor: input.actor,
    reason: input.reason,
    expiresAt,
  };
  await journal.approvals.decide(decision);
  return {
    jobId: decision.jobId,
    generation: decision.generation,
    decision: input.approve ? "approved" : "rejected",
    digest: decision.digest,
    effects,
    actor: decision.actor,
    reason: decision.reason,
    expiresAt: input.approve ? expiresAt : clock.now(),
  };
}
