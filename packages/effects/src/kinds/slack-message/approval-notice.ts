import type { SlackMessageSpec } from "./slack-message-kind.js";

/** The fields of an approval notice a message tells (docs/approvals.md, "Notices"). */
export interface ApprovalNoticeFacts {
  type: "approval.requested" | "approval.reminder";
  jobId: string;
  generation: number;
  agent: string;
  effects: number[];
  rules: string[];
  expiresAt: number;
}

/**
 * The `slack.message` an approval notice becomes with `approvals.notify.slack` (`{ channel }`, a
 * channel alias of the `slack` section): recorded as an output of its own and applied once by the
 * interpreter like any effect. Only idem's own words and the notice's fields (a job ID, an agent
 * name, rule names: none can carry a `<!channel>`), so it is never refused as a broadcast.
 */
export function slackApprovalNotice(
  settings: { channel: string },
  notice: ApprovalNoticeFacts,
): SlackMessageSpec {
  const what = `job ${notice.jobId} (agent ${notice.agent}, generation ${notice.generation})`;
  const effects = notice.effects.join(", ");
  const rules = notice.rules.length > 0 ? ` (rules: ${notice.rules.join(", ")})` : "";
  const expires = new Date(notice.expiresAt).toISOString();
  const lead = notice.type === "approval.reminder" ? "Reminder: still waiting" : "Waiting";
  return {
    kind: "slack.message",
    channel: settings.channel,
    text:
      `${lead} for a person's approval: ${what}, effects ${effects}${rules}. ` +
      `It expires at ${expires}. Decide with \`idem approve ${notice.jobId} --reason …\` or ` +
      `\`idem reject ${notice.jobId} --reason …\`.`,
  };
}

/** The effects `approvals.notify` records, by its key: each builds its kind's spec of a notice. */
export const APPROVAL_NOTICE_EFFECTS = { slack: slackApprovalNotice } as const;
