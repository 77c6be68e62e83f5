export type { AuditReport } from "./audit-report.js";
export { buildAudit, isAuditClean } from "./audit-report.js";
