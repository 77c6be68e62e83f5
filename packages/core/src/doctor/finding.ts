/**
 * A violation (proven damage, a broken invariant) makes `idem doctor` exit 3; `unavailable`
 * (a server out of reach, a lock held by another process: nothing is damaged, something must
 * come back or let go) exit 1; a warning is worth knowing but breaks nothing yet.
 */
export type Severity = "violation" | "unavailable" | "warning";

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
