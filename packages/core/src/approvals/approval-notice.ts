/** The body a notice POSTs (docs/approvals.md, "Notices"). */
export interface ApprovalNotice {
  /** `<type>/<jobId>/<generation>`: the same at every retry (NATS's `Nats-Msg-Id`). */
  id: string;
  type: "approval.requested" | "approval.reminder";
  jobId: string;
  generation: number;
  agent: string;
  effects: number[];
  rules: string[];
  digest: string;
  expiresAt: number;
}

/** Where a notice goes: the `approvals.notify` key, and how it is sent. */
export interface NoticeChannel {
  to: string;
  send(notice: ApprovalNotice): Promise<void>;
}
