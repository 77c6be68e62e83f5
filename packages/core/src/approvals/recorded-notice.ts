import type { KindRegistry } from "@idem/effects";
import type { JournalStore } from "@idem/journal";
import { type Config, IdemError, isJobId, NOTICE_AGENT, sha256Hex } from "@idem/schema";
import { checkOutput, isCheckedOutput, recordOutput } from "../record/record-output.js";
import type { ApprovalNotice, NoticeChannel } from "./approval-notice.js";

/** Builds the effect spec a notice becomes for the settings of its `approvals.notify` key. */
export type NoticeEffect = (settings: never, notice: ApprovalNotice) => unknown;

/** What recording notices needs: the config and kinds they are checked with, and the builders. */
export interface RecordedNotices {
  journal: JournalStore;
  config: Config;
  kinds?: KindRegistry | undefined;
  /** By `approvals.notify` key: the effect a notice becomes there (the kinds' own builders). */
  effects: Readonly<Record<string, NoticeEffect>>;
}

/**
 * The job ID of the output a notice becomes: `idem-approval-notice:<jobId>:<generation>:<type>`
 * (the job ID a sha256 prefix when the whole would exceed a job ID's 128 characters), so a retry
 * or a second interpreter records the same job, a duplicate.
 */
export function noticeJobId(notice: ApprovalNotice): string {
  const type = notice.type === "approval.reminder" ? "reminder" : "waiting";
  const id = `idem-approval-notice:${notice.jobId}:${notice.generation}:${type}`;
  if (isJobId(id)) return id;
  return `idem-approval-notice:${sha256Hex(notice.jobId).slice(0, 32)}:${notice.generation}:${type}`;
}

/**
 * The channels that record each notice as an output of its own (agent `idem`, one effect the
 * builder of its key makes), through `recordOutput`: checked like any output, then applied once by
 * the interpreter like any effect, never sent from here. A refused output is a failure, tried again
 * at the next sweep (and logged).
 */
export function recordedChannels(
  notify: Readonly<Record<string, unknown>> | null | undefined,
  r: RecordedNotices,
): NoticeChannel[] {
  const out: NoticeChannel[] = [];
  for (const [to, build] of Object.entries(r.effects)) {
    const settings = notify?.[to];
    if (settings === undefined) continue;
    out.push({
      to,
      async send(notice) {
        const output = {
          jobId: noticeJobId(notice),
          agent: NOTICE_AGENT,
          effects: [build(settings as never, notice)],
        };
        const recorded = await recordOutput({
          journal: r.journal,
          config: r.config,
          kinds: r.kinds,
          output,
          source: "approval-notice",
          actor: "idem",
        });
        if (recorded.status === "recorded" || recorded.status === "duplicate") return;
        const why =
          "issues" in recorded
            ? recorded.issues.map((i) => `${i.path}: ${i.message}`).join("; ")
            : `another output was recorded for ${output.jobId}`;
        throw new Error(`the notice's output was refused (${recorded.status}): ${why}`);
      },
    });
  }
  return out;
}

/**
 * Checks, when an interpreter starts, that each notice `approvals.notify` records would pass
 * `checkOutput` (a Slack channel alias the `slack` section has): a sample notice of each key with a
 * builder in `effects`, so a notice that could never be recorded is refused before any run waits.
 * @throws IdemError INVALID_CONFIG naming the key at fault (`approvals.notify.slack.channel`).
 */
export function assertApprovalNotices(r: Omit<RecordedNotices, "journal">): void {
  const { config, kinds, effects } = r;
  const sample: ApprovalNotice = {
    id: "approval.requested/job/1",
    type: "approval.requested",
    jobId: "job",
    generation: 1,
    agent: "agent",
    effects: [1],
    rules: ["rule"],
    digest: "0".repeat(64),
    expiresAt: 0,
  };
  for (const [to, build] of Object.entries(effects)) {
    const settings = (config.approvals.notify as Record<string, unknown> | null)?.[to];
    if (settings === undefined) continue;
    const output = {
      jobId: noticeJobId(sample),
      agent: NOTICE_AGENT,
      effects: [build(settings as never, sample)],
    };
    const c = checkOutput(output, config, kinds);
    if (isCheckedOutput(c)) continue;
    const [issue] = c.issues;
    const key =
      `approvals.notify.${to}${issue?.path ? `.${issue.path.replace(/^effects\.0\.?/, "")}` : ""}`.replace(
        /\.$/,
        "",
      );
    throw new IdemError("INVALID_CONFIG", `${key}: ${issue?.message ?? "is refused"}`, {
      details: { key },
    });
  }
}
