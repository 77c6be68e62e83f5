import { JOURNAL_EVENTS as E, type EventRecord, type JournalStore } from "@idem/journal";

/** One step of a job's approvals as `idem show`, the console and the audit export list it. */
export interface ShownApproval {
  generation: number;
  /** When (epoch ms). */
  at: number;
  /** requested (the run began waiting), approved, rejected, expired (nobody decided in time). */
  step: "requested" | "approved" | "rejected" | "expired";
  /** Who: the interpreter that parked the run, the person who decided, `idem` for an expiry. */
  actor: string;
  /** Why (a decision's reason); null for a request or an expiry. */
  reason: string | null;
  /** The effects asked for or decided, by index in the output. */
  effects: number[];
  /** The recorded output's digest the step is bound to; null for an expiry. */
  digest: string | null;
  /** The rules that matched (a request only). */
  rules: string[];
  /** Until when a request waits or an approval may be used; null otherwise. */
  expiresAt: number | null;
}

const STEPS: Record<string, ShownApproval["step"]> = {
  [E.APPROVAL_REQUESTED]: "requested",
  [E.APPROVAL_GRANTED]: "approved",
  [E.APPROVAL_REJECTED]: "rejected",
  [E.APPROVAL_EXPIRED]: "expired",
};

const numbers = (v: unknown): number[] =>
  Array.isArray(v) ? v.filter((i): i is number => typeof i === "number") : [];

/** A job's approval steps, in the order written, read from its events. Pure. */
export function approvalHistory(events: readonly EventRecord[]): ShownApproval[] {
  const out: ShownApproval[] = [];
  for (const e of events) {
    const step = STEPS[e.type];
    if (!step) continue;
    const d = e.data ?? {};
    out.push({
      generation: typeof d.generation === "number" ? d.generation : 0,
      at: e.at,
      step,
      actor: e.actor,
      reason: typeof d.reason === "string" ? d.reason : null,
      effects: numbers(d.effects),
      digest: typeof d.digest === "string" ? d.digest : null,
      rules: Array.isArray(d.rules)
        ? d.rules.filter((r): r is string => typeof r === "string")
        : [],
      expiresAt: typeof d.expiresAt === "number" ? d.expiresAt : null,
    });
  }
  return out;
}

/** A decision on an approval as the audit exports it: which job, who, when, why. */
export interface AuditedApproval extends ShownApproval {
  jobId: string;
}

/** The decisions (approved, rejected, expired) written since `since`, in the order written. */
export async function approvalDecisions(
  journal: JournalStore,
  since?: number,
): Promise<AuditedApproval[]> {
  const types = [E.APPROVAL_GRANTED, E.APPROVAL_REJECTED, E.APPROVAL_EXPIRED];
  const lists = await Promise.all(
    types.map((type) => journal.events.list({ type, ...(since === undefined ? {} : { since }) })),
  );
  const events = lists.flat().sort((a, b) => a.id - b.id);
  return approvalHistory(events).map((a, i) => ({ jobId: events[i]?.jobId ?? "", ...a }));
}
