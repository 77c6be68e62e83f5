// Approval gates (docs/approvals.md): the config's rules and what they match, the interpreter's
// gate before an effect that needs a person, the decision bound to the recorded output, and the
// sweep that ends requests nobody decided.
export type { ApprovalSettings, GrantedApproval, RunGate } from "./approval-gate.js";
export { approvalGrantOf, gatedEffects, grantCovers, runGate } from "./approval-gate.js";
export type { AuditedApproval, ShownApproval } from "./approval-history.js";
export { approvalDecisions, approvalHistory } from "./approval-history.js";
export type { ApprovalNotice } from "./approval-notice.js";
export {
  alwaysRule,
  approvalReasons,
  assertApprovalRules,
  describeApprovalRules,
  globRegExp,
  ruleMatches,
  ruleName,
} from "./approval-rules.js";
export type { ApprovalSweep, ApprovalSweepResult } from "./approval-sweep.js";
export { APPROVAL_SWEEP_MS, createApprovalSweep } from "./approval-sweep.js";
export type { ApprovalInput, ApprovalResult } from "./decide-approval.js";
export { decideApproval, requestIn } from "./decide-approval.js";
