// Doctor: the checks of the config invariants, the journal, the targets and NATS; and the
// workspace setup of `idem init` they check.
export type { Finding, Severity } from "./finding.js";
export { initialConfig, initWorkspace } from "./init-workspace.js";
export type { DoctorOptions, DoctorReport } from "./run-doctor.js";
export { runDoctor } from "./run-doctor.js";
export { verifyJournal } from "./verify-journal.js";
