import { type AwaitingRun, JOURNAL_EVENTS as E, type JournalStore } from "@idem/journal";
import type { Logger } from "@idem/runtime";
import { type Clock, type Config, describeError } from "@idem/schema";

/** How often an interpreter ends the approval requests that expired (at most). */
export const APPROVAL_SWEEP_MS = 1_000;

/** How long a notice's POST may take before it is tried again at the next sweep. */
const NOTICE_TIMEOUT_MS = 10_000;

/** What one sweep did: the requests it ended, the notices it sent, the notices that failed. */
export interface ApprovalSweepResult {
  expired: string[];
  notices: number;
  failures: string[];
}

/** The interpreter's periodic chore for approval gates: expiries, then notices and reminders. */
export interface ApprovalSweep {
  /** At most every `everyMs`; between, it answers that it did nothing. */
  sweep(): Promise<ApprovalSweepResult>;
}

/** The body a notice POSTs (docs/approvals.md, "Notices"). */
export interface ApprovalNotice {
  type: "approval.requested" | "approval.reminder";
  jobId: string;
  generation: number;
  agent: string;
  effects: number[];
  rules: string[];
  digest: string;
  expiresAt: number;
}

const NONE: ApprovalSweepResult = { expired: [], notices: 0, failures: [] };

/**
 * The sweep of one interpreter process over `journal`: ends the requests that expired (fail
 * closed), then, with `approvals.notify.webhook`, POSTs a notice for each run that began waiting
 * and a reminder `approvals.remindBeforeMs` before its request expires, each once per generation
 * (an `approval.notice` event written after the POST succeeded: a crash between them sends it
 * again, so a receiver keys on jobId, generation and type). A failed POST is logged by the caller
 * and tried again at the next sweep.
 */
export function createApprovalSweep(options: {
  journal: JournalStore;
  clock: Clock;
  settings?: Config["approvals"];
  fetch?: typeof fetch;
  everyMs?: number;
  /** Where the expiries and failed notices are logged (warnings), if anywhere. */
  log?: Logger;
}): ApprovalSweep {
  const { journal, clock, settings } = options;
  const send = options.fetch ?? fetch;
  const everyMs = options.everyMs ?? APPROVAL_SWEEP_MS;
  let last = Number.NEGATIVE_INFINITY;

  async function noticesFor(run: AwaitingRun, now: number): Promise<ApprovalNotice[]> {
    const sent = (await journal.events.list({ jobId: run.jobId, type: E.APPROVAL_NOTICE }))
      .filter((e) => e.data?.generation === run.generation)
      .map((e) => e.data?.type);
    const fields = {
      jobId: run.jobId,
      generation: run.generation,
      agent: run.agent,
      ...run.request,
    };
    const out: ApprovalNotice[] = [];
    if (!sent.includes("approval.requested")) out.push({ type: "approval.requested", ...fields });
    const remind = settings?.remindBeforeMs;
    if (
      remind != null &&
      now >= run.request.expiresAt - remind &&
      !sent.includes("approval.reminder")
    )
      out.push({ type: "approval.reminder", ...fields });
    return out;
  }

  async function notify(
    webhook: string,
    now: number,
  ): Promise<Omit<ApprovalSweepResult, "expired">> {
    let notices = 0;
    const failures: string[] = [];
    for (const run of await journal.approvals.awaiting(100)) {
      for (const notice of await noticesFor(run, now)) {
        try {
          const r = await send(webhook, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(notice),
            signal: AbortSignal.timeout(NOTICE_TIMEOUT_MS),
          });
          if (!r.ok) throw new Error(`the webhook answered ${r.status}`);
        } catch (e) {
          // Its notices go in order: no reminder before the first notice got through.
          failures.push(`${run.jobId}: ${describeError(e)}`);
          break;
        }
        await journal.events.append({
          jobId: run.jobId,
          type: E.APPROVAL_NOTICE,
          actor: "idem",
          data: { generation: run.generation, type: notice.type, to: "webhook" },
        });
        notices += 1;
      }
    }
    return { notices, failures };
  }

  function logged(r: ApprovalSweepResult): ApprovalSweepResult {
    if (r.expired.length > 0)
      options.log?.warn(
        { event: "interpreter.approvals-expired", jobs: r.expired },
        "approval requests expired: their runs ended (class rejected)",
      );
    if (r.failures.length > 0)
      options.log?.warn(
        { event: "interpreter.approval-notice-failed", failures: r.failures },
        "approval notices could not be sent; trying again",
      );
    return r;
  }

  return {
    async sweep() {
      const now = clock.now();
      if (now - last < everyMs) return NONE;
      last = now;
      const expired = await journal.approvals.expire();
      const webhook = settings?.notify?.webhook;
      if (!webhook) return logged({ ...NONE, expired });
      return logged({ expired, ...(await notify(webhook, now)) });
    },
  };
}
