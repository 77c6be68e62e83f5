import { z } from "zod";
import { positiveMs } from "./config-parts.js";
import { AGENT_PATTERN } from "./ids.js";
import { SUBJECT_PREFIX_PATTERN } from "./subjects.js";

/**
 * What a replay of an approved output needs (docs/approvals.md, "Replays"): `reapprove` a new
 * approval for the new generation (an approval is bound to one interpretation, as Terraform binds
 * one to one plan), `reuse` the approval of an earlier generation of the same recorded output
 * (same digest, same effects).
 */
export const APPROVAL_REPLAY = ["reapprove", "reuse"] as const;

/** A name or a list of names; one name is a list of one. */
const names = (item: z.ZodString) =>
  z
    .union([item, z.array(item).min(1)])
    .transform((v): string[] => (typeof v === "string" ? [v] : v));

/**
 * One rule of `approvals.rules`: an effect it matches needs a person's approval before it is
 * applied. Every field given must match (a field lists alternatives): `kind` the effect's kind,
 * `agent` the agent whose output it is, `repo`/`root`/`target` a place the effect acts on (the
 * kinds' place vocabulary, as `idem replay --repo/--root/--target`), and `match` the facts the
 * kind exposes to rules (`approval.facts` of the kind: a pull request's `base`, a statement's
 * `statement`, a commit's `paths`), each a glob (`*` within a path segment, `**` across).
 */
export const ApprovalRuleSchema = z.strictObject({
  /** A name for people (`idem doctor`, the request's event); default `rule <index>`. */
  name: z.string().min(1).max(64).optional(),
  kind: names(z.string().min(1)).optional(),
  agent: names(
    z.string().regex(AGENT_PATTERN, "must be an agent name: a-z, 0-9, _ and -"),
  ).optional(),
  repo: names(z.string().min(1)).optional(),
  root: names(z.string().min(1)).optional(),
  target: names(z.string().min(1)).optional(),
  match: z.record(z.string().min(1), names(z.string().min(1))).optional(),
});

/** The agent of the outputs idem records itself (`approvals.notify.slack`): no config names it. */
export const NOTICE_AGENT = "idem";

/** A parsed rule of `approvals.rules`. */
export type ApprovalRule = z.infer<typeof ApprovalRuleSchema>;

const approvalsDefaults = {
  rules: [] as ApprovalRule[],
  expiryMs: 86_400_000,
  replay: "reapprove" as const,
  remindBeforeMs: null,
  notify: null,
};

/**
 * Where a notice goes when a run starts waiting for an approval, and its reminder before expiry
 * (docs/approvals.md, "Notices"): a webhook, POSTed a JSON body by the interpreter; a NATS
 * subject, the same body published there (on the `nats` section's servers unless `url` names
 * others); a Slack channel alias, the notice recorded as a message of its own (an output of agent
 * `idem`) and applied once by the interpreter. At least one.
 */
export const ApprovalNoticeSchema = z
  .strictObject({
    webhook: z.url().optional(),
    nats: z
      .strictObject({
        subject: z
          .string()
          .regex(SUBJECT_PREFIX_PATTERN, "must be a NATS subject without wildcards"),
        url: z.string().min(1).optional(),
      })
      .optional(),
    slack: z.strictObject({ channel: z.string().min(1).max(64) }).optional(),
  })
  .refine((n) => Object.values(n).some((v) => v !== undefined), {
    message: "must name where notices go: webhook, nats or slack",
  });

/**
 * `approvals` (docs/approvals.md): which effects wait for a person's approval, how long a request
 * (and an approval given) stays valid, what a replay of an approved output needs, and who is told.
 */
export const ApprovalsConfigSchema = z
  .strictObject({
    rules: z.array(ApprovalRuleSchema).default([]),
    /**
     * How long a run waits for a decision before it ends (class `rejected`, fails closed), and how
     * long an approval given stays usable before the interpreter applies it.
     */
    expiryMs: positiveMs.default(approvalsDefaults.expiryMs),
    replay: z.enum(APPROVAL_REPLAY).default(approvalsDefaults.replay),
    /** A reminder this long before a request expires; null: none. */
    remindBeforeMs: positiveMs.nullable().default(null),
    notify: ApprovalNoticeSchema.nullable().default(null),
  })
  .default(approvalsDefaults);

/** The parsed `approvals` section. */
export type ApprovalsConfig = z.infer<typeof ApprovalsConfigSchema>;
