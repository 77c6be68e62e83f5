import { type AwaitingRun, JOURNAL_EVENTS as E, type JournalStore } from "@idem/journal";
import type { SubjectPublisher } from "@idem/nats";
import type { Logger } from "@idem/runtime";
import { type Clock, type Config, describeError, NOTICE_AGENT, natsServers } from "@idem/schema";
import type { ApprovalNotice } from "./approval-notice.js";
import { noticeChannels } from "./notice-channels.js";
import type { RecordedNotices } from "./recorded-notice.js";

/** How often an interpreter ends the approval requests that expired (at most). */
export const APPROVAL_SWEEP_MS = 1_000;

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
  /** Closes the NATS connection the notices opened, if any. */
  close(): Promise<void>;
}

const NONE: ApprovalSweepResult = { expired: [], notices: 0, failures: [] };

/**
 * The notices of `run` not yet sent to `to` (its `approval.notice` events for this generation):
 * the first, then the reminder once `remind` says it is time.
 */
async function noticesFor(
  journal: JournalStore,
  run: AwaitingRun,
  to: string,
  remind: boolean,
): Promise<ApprovalNotice[]> {
  const sent = (await journal.events.list({ jobId: run.jobId, type: E.APPROVAL_NOTICE }))
    .filter((e) => e.data?.generation === run.generation && (e.data?.to ?? "webhook") === to)
    .map((e) => e.data?.type);
  const notice = (type: ApprovalNotice["type"]): ApprovalNotice => ({
    id: `${type}/${run.jobId}/${run.generation}`,
    type,
    jobId: run.jobId,
    generation: run.generation,
    agent: run.agent,
    ...run.request,
  });
  const out: ApprovalNotice[] = [];
  if (!sent.includes("approval.requested")) out.push(notice("approval.requested"));
  if (remind && !sent.includes("approval.reminder")) out.push(notice("approval.reminder"));
  return out;
}

/**
 * The sweep of one interpreter process over `journal`: ends the requests that expired (fail
 * closed), then, with `approvals.notify`, sends a notice for each run that began waiting and a
 * reminder `approvals.remindBeforeMs` before its request expires, to each place named (a webhook's
 * POST, a NATS subject), each once per generation and place (an `approval.notice` event written
 * after it was sent: a crash between them sends it again, so a receiver keys on the notice's `id`;
 * a JetStream stream drops the repeat by its `Nats-Msg-Id`). A failed one is logged and tried
 * again at the next sweep.
 */
export function createApprovalSweep(options: {
  journal: JournalStore;
  clock: Clock;
  settings?: Config["approvals"];
  fetch?: typeof fetch;
  /** The config's `nats` section: its servers carry `approvals.notify.nats` without a `url`. */
  nats?: Config["nats"] | undefined;
  /**
   * With it, the `approvals.notify` keys it has builders for are recorded as outputs of their own
   * (`recordedChannels`); the interpreter passes its config, kinds and the kinds' builders.
   * @throws IdemError INVALID_CONFIG when such a notice could never be recorded
   *   (`assertApprovalNotices`), so the interpreter does not start.
   */
  record?: Omit<RecordedNotices, "journal">;
  /** Publishes the NATS notices; default one of its own, opened on first use. */
  publisher?: SubjectPublisher;
  everyMs?: number;
  /** Where the expiries and failed notices are logged (warnings), if anywhere. */
  log?: Logger;
}): ApprovalSweep {
  const { journal, clock, settings } = options;
  const everyMs = options.everyMs ?? APPROVAL_SWEEP_MS;
  let last = Number.NEGATIVE_INFINITY;

  const { channels, close } = noticeChannels({
    settings,
    send: options.fetch ?? fetch,
    ...(options.nats ? { natsServers: natsServers(options.nats) } : {}),
    ...(options.publisher ? { publisher: options.publisher } : {}),
    ...(options.record ? { record: { ...options.record, journal } } : {}),
  });

  const remindAt = (run: AwaitingRun, now: number): boolean => {
    const remind = settings?.remindBeforeMs;
    return remind != null && now >= run.request.expiresAt - remind;
  };

  async function notify(now: number): Promise<Omit<ApprovalSweepResult, "expired">> {
    let notices = 0;
    const failures: string[] = [];
    for (const run of await journal.approvals.awaiting(100)) {
      // A notice's own output waiting (a rule on its channel) is told of by no further notice.
      if (run.agent === NOTICE_AGENT) continue;
      for (const channel of channels) {
        for (const notice of await noticesFor(journal, run, channel.to, remindAt(run, now))) {
          try {
            await channel.send(notice);
          } catch (e) {
            // Its notices go in order: no reminder before the first notice got through.
            failures.push(`${run.jobId} (${channel.to}): ${describeError(e)}`);
            break;
          }
          await journal.events.append({
            jobId: run.jobId,
            type: E.APPROVAL_NOTICE,
            actor: "idem",
            data: { generation: run.generation, type: notice.type, to: channel.to },
          });
          notices += 1;
        }
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
      if (channels.length === 0) return logged({ ...NONE, expired });
      return logged({ expired, ...(await notify(now)) });
    },
    close,
  };
}
