// The report of the conformance drill (`idem kinds test --json`, `drillKind` of @idem/kit/drill,
// `runKindDrill` of @idem/core): its fields are the contract of docs/cli.md and
// docs/effect-kinds.md. Read them by name; more may appear.
import type { KindGuarantee } from "./effect-kind.js";

/** What the drill concludes of a kind. */
export const DRILL_VERDICTS = {
  /** Every key present once at the target after every crash; nothing left for a person. */
  EXACTLY_ONCE: "exactly-once-in-effect",
  /** Nothing duplicated or lost, but some effects can end `uncertain`, for a person. */
  CAN_END_UNCERTAIN: "can-end-uncertain",
  /** A finding of severity `broken`: a duplicate, a lost effect, a probe or apply that breaks the contract. */
  BROKEN: "broken",
} as const;
/** One of DRILL_VERDICTS. */
export type DrillVerdict = (typeof DRILL_VERDICTS)[keyof typeof DRILL_VERDICTS];

/** Each finding's code, the reason a verdict names (a test asserts on these, never on the text). */
export const DRILL_FINDINGS = {
  /** An invalid sample passed the kind's schema and checks. */
  INVALID_SAMPLE_ACCEPTED: "invalid-sample-accepted",
  /** An invalid sample was refused, but no issue named its field. */
  INVALID_SAMPLE_WRONG_FIELD: "invalid-sample-wrong-field",
  /** A valid sample was refused before record: the drill cannot run it. */
  VALID_SAMPLE_REFUSED: "valid-sample-refused",
  /** The probe of a key never applied said present (or conflict). */
  PRESENT_BEFORE_APPLY: "present-before-apply",
  /** After apply, the probe did not say present. */
  ABSENT_AFTER_APPLY: "absent-after-apply",
  /** After apply, the kind's scan did not show the key at exactly one location. */
  SCAN_MISSES_APPLIED_KEY: "scan-misses-applied-key",
  /** A second apply of an applied effect changed the target (a second item, a key moved). */
  SECOND_APPLY_CHANGED_TARGET: "second-apply-changed-target",
  /** Probing a key never applied changed the target (its scan, or a second probe, shows it). */
  PROBE_CHANGED_TARGET: "probe-changed-target",
  /** A probe, apply or scan of the checks failed: the message has the error's code. */
  TARGET_ERROR: "target-error",
  /** After the crashes, a key is at the target more than once. */
  DUPLICATED_AT_TARGET: "duplicated-at-target",
  /** After the crashes, a key the journal settled (applied, present) is not at the target. */
  MISSING_AT_TARGET: "missing-at-target",
  /** Runs ended dead for a reason other than an uncertain outcome (a conflict, a validation error). */
  RUNS_ENDED_DEAD: "runs-ended-dead",
  /** The interpreter did not drain the journal within its starts. */
  NOT_DRAINED: "not-drained",
  /** Runs ended `uncertain` after a crash (the finding says after which fault points). */
  RUNS_ENDED_UNCERTAIN: "runs-ended-uncertain",
  /** The kind's guarantee is `uncertain-window`: a crash between sending and recording can leave one. */
  DECLARED_UNCERTAIN: "declared-uncertain",
  /** The kind's probe cannot tell for the samples (`probeable` false): a crash after sending is uncertain. */
  UNPROBEABLE_SAMPLES: "unprobeable-samples",
  /** The kind has no scan: the drill counted keys by probe, which cannot see a second copy. */
  DUPLICATES_NOT_COUNTED: "duplicates-not-counted",
  /** A fault point the kind declares was never reached in the drill. */
  FAULT_POINT_NOT_REACHED: "fault-point-not-reached",
  /**
   * The kind declares more than the drill showed: `exactly-once`, `exactly-once-in-effect` or
   * `target-dedup` declared, and effects can end uncertain (`details.declared`, `details.shown`).
   */
  GUARANTEE_NOT_SHOWN: "guarantee-not-shown",
} as const;
/** One of DRILL_FINDINGS. */
export type DrillFindingCode = (typeof DRILL_FINDINGS)[keyof typeof DRILL_FINDINGS];

/** How much a finding weighs: `broken` decides the verdict, `uncertain` makes it can-end-uncertain. */
export type DrillSeverity = "broken" | "uncertain" | "note";

/** One thing the drill found, with its code, weight, a sentence, and what it saw. */
export interface DrillFinding {
  code: DrillFindingCode;
  severity: DrillSeverity;
  message: string;
  details?: Record<string, unknown>;
}

/** One step of the checks against the target (probe, apply, scan), in order. */
export interface DrillCheck {
  /** `probe-before-apply`, `apply`, `probe-after-apply`, `scan-after-apply`, `second-apply`, `fresh-probe`, `fresh-scan`, `fresh-probe-again`. */
  check: string;
  key: string;
  ok: boolean;
  /** What the target answered: a probe's status, the locations a scan found, an error's code. */
  observed: string;
}

/** One interpreter start of the crash phase: armed at a fault point, or the last clean drain. */
export interface DrillStart {
  /** The `IDEM_FAULT` point it was armed with; null for a clean drain. */
  point: string | null;
  /** Whether it died by SIGKILL at that point. */
  killed: boolean;
  exitCode: number | null;
  signal: string | null;
}

/** Where one recorded effect stands once the journal is drained. */
export interface DrillKey {
  key: string;
  jobId: string;
  /** At the target: `once` (scan: one location), `present` (probe: present, copies not countable), `missing`, `duplicated`. */
  atTarget: "once" | "present" | "missing" | "duplicated";
  /** The locations the scan found (ids, commits); absent without a scan. */
  locations?: string[];
  /** The state of its output's latest run (`done`, `dead`, ...). */
  run: string;
  /** The class of a dead run (`uncertain`, `conflict`, ...), else null. */
  class: string | null;
  /** Its state in the ledger of that run (`applied`, `present`, `uncertain`, ...), null without a row. */
  ledger: string | null;
  /** For a dead run (uncertain or not): the fault point of the kill that last left it half done, null for none. */
  after?: string | null;
}

/** The drill's whole answer. */
export interface KindDrillReport {
  kind: string;
  builtIn: boolean;
  /** The module it was loaded from (absolute path or package name); null for idem's own kinds. */
  module: string | null;
  /** The guarantee the kind declares. */
  guarantee: KindGuarantee;
  /**
   * The guarantee the drill showed: the declared one when every key was once and no run was left
   * for a person, `uncertain-window` when effects can end uncertain, null when it is broken.
   */
  shown: KindGuarantee | null;
  verdict: DrillVerdict;
  /** The verdict in plain words, with the reasons (`broken: duplicated-at-target (2 keys)`). */
  summary: string;
  findings: DrillFinding[];
  /** The kind's invalid samples, each refused naming its field or not; how many valid ones it used. */
  samples: { invalid: { field: string; refused: boolean; named: string[] }[]; valid: number };
  checks: DrillCheck[];
  crashes: {
    /** Outputs recorded (N, and one more for a fault point reached after the journal drained). */
    outputs: number;
    /** The fault points armed, idem's and the kind's own. */
    points: string[];
    starts: DrillStart[];
  };
  /** How keys were counted at the target: the kind's scan, else its probe. */
  countedBy: "scan" | "probe";
  keys: DrillKey[];
  counts: {
    once: number;
    present: number;
    missing: number;
    duplicated: number;
    uncertain: number;
    dead: number;
  };
  durationMs: number;
  /** What the drill cannot see, in words (DRILL_BLIND_SPOTS): a clean verdict says nothing of it. */
  cannotSee: string[];
}

/** What no drill sees: every report carries it, so that exit 0 is not read as more. */
export const DRILL_BLIND_SPOTS: readonly string[] = [
  "writes outside what probe and scan read: an item the kind makes without its key, a second write the probe does not look for (@idem/kit/test counts the requests made through ctx.fetch)",
  "crashes inside apply between two writes, except at the fault points the kind lists (@idem/kit/test throws around every ctx.fetch request)",
  "other targets than the one its options name, and specs unlike its samples",
  "a target that loses what it acknowledged (a write lost after the drill's count)",
];

/** The verdict in plain words: `exactly once in effect`, `can end uncertain`, `broken`. */
export function verdictWords(verdict: DrillVerdict): string {
  return verdict === DRILL_VERDICTS.EXACTLY_ONCE
    ? "exactly once in effect"
    : verdict === DRILL_VERDICTS.CAN_END_UNCERTAIN
      ? "can end uncertain"
      : "broken";
}
