// The report of @idem/kit/test's in-process tester: what it checked, what it injected, what it
// found. Its finding codes are the drill's where the drill would see the same (DRILL_FINDINGS),
// and a few of its own.
import { DRILL_FINDINGS, type DrillCheck, type DrillSeverity } from "../drill-report.js";

/** The tester's finding codes: the drill's, and what only a throw around each request shows. */
export const KIND_TEST_FINDINGS = {
  ...DRILL_FINDINGS,
  /**
   * After a throw and a clean retry (probe, then apply when absent), fewer writes took effect
   * than one clean apply makes: a write was skipped, as when the probe finds the first of two
   * writes and the retry never makes the second (a gap between two writes).
   */
  INCOMPLETE_AFTER_THROW: "incomplete-after-throw",
  /**
   * After a throw and a clean retry, a write that is not idempotent by its method (POST, PATCH)
   * took effect more often than in one clean apply: the target got the request twice.
   */
  REPEATED_WRITE_AFTER_THROW: "repeated-write-after-throw",
  /** After a throw, the clean retry's probe said conflict: the run would end dead, for a person. */
  CONFLICT_AFTER_THROW: "conflict-after-throw",
  /** After a throw, the clean retry failed (its code is in the finding). */
  RETRY_FAILED: "retry-failed",
  /** A fault point the kind called was not in its `faultPoints` (the drill never arms it). */
  FAULT_POINT_NOT_LISTED: "fault-point-not-listed",
  /** The kind made no request through `ctx.fetch`: only its fault points had throws injected. */
  NO_REQUESTS_SEEN: "no-requests-seen",
  /** More throw sites than `maxScenarios`: the rest were not tried. */
  SCENARIOS_CAPPED: "scenarios-capped",
} as const;
/** One of KIND_TEST_FINDINGS. */
export type KindTestFindingCode = (typeof KIND_TEST_FINDINGS)[keyof typeof KIND_TEST_FINDINGS];

/** One thing the tester found: `broken` fails `assertKind`; `uncertain` and `note` do not. */
export interface KindTestFinding {
  code: KindTestFindingCode;
  severity: DrillSeverity;
  message: string;
  details?: Record<string, unknown>;
}

/** One throw injected, and what the clean retry after it left at the target. */
export interface KindTestScenario {
  /** Where it threw: `before request 2 (POST /tickets)`, `after request 2 (POST /tickets)`, `fault acme.after-create (1)`. */
  at: string;
  key: string;
  /** Whether the throw fired (a kind that makes fewer requests this time may never get there). */
  fired: boolean;
  /** Writes (requests other than GET, HEAD, OPTIONS) that took effect, the throw's attempt and the retry's together. */
  writes: number;
  /** What the retry ended with: `present`, `absent`, `conflict`, an error's code. */
  observed: string;
  ok: boolean;
}

/** The tester's whole answer. */
export interface KindTestReport {
  kind: string;
  guarantee: string;
  /** No finding of severity `broken`. */
  ok: boolean;
  findings: KindTestFinding[];
  samples: { invalid: { field: string; refused: boolean; named: string[] }[]; valid: number };
  /** The probe and apply checks, as the drill's phase 2 makes them. */
  checks: DrillCheck[];
  /** What one clean probe and apply asked of the target, in order (`GET /tickets`). */
  requests: string[];
  /** The fault points one clean apply called, in order. */
  faultCalls: string[];
  scenarios: KindTestScenario[];
  /** What the tester cannot see, in words (the same every run: read it once). */
  cannotSee: string[];
}

/** What no in-process tester sees; the report carries it so that a green run is not read as more. */
export const KIND_TEST_BLIND_SPOTS: readonly string[] = [
  "writes the kind makes other than through ctx.fetch (a client of its own, files, sockets): only its fault points throw between them",
  "items a write makes that neither probe nor scan reads, unless a throw leaves the write counts of the retry apart from a clean apply's",
  "a real process death: what a throw cannot stop (a timer, a promise not awaited) goes on; `idem kinds test` kills real interpreters",
  "several processes at once: the tester runs one probe or apply at a time",
];
