/** A violation makes `idem doctor` exit 3; a warning is worth knowing but breaks nothing yet. */
export type Severity = "violation" | "warning";

/** One thing doctor found: plain data, rendered by a front end as a row (severity, key, finding, fix). */
export interface Finding {
  severity: Severity;
  /** The config key or the part at fault (`journal.retentionDays`, `repos.site`, `journal`). */
  key: string;
  finding: string;
  /** What to do about it. */
  fix: string;
}

/** How a check reports what it finds. */
export type AddFinding = (severity: Severity, key: string, finding: string, fix: string) => void;
