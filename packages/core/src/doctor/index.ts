// Doctor: the checks of the config invariants, the journal, the targets and NATS.
export type { Finding, Severity } from "./finding.js";
export type { DoctorOptions, DoctorReport } from "./run-doctor.js";
export { runDoctor } from "./run-doctor.js";
