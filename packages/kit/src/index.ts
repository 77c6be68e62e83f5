// @idem/kit: write an effect kind of your own (docs/effect-kinds.md). idem's built-in kinds are
// written with the same API.
export { defineEffectKind, isKindName, KIND_NAME_PATTERN } from "./define-effect-kind.js";
export type {
  DrillCheck,
  DrillFinding,
  DrillFindingCode,
  DrillKey,
  DrillSeverity,
  DrillStart,
  DrillVerdict,
  KindDrillReport,
} from "./drill-report.js";
export { DRILL_FINDINGS, DRILL_VERDICTS, verdictWords } from "./drill-report.js";
export type {
  AnyEffectKind,
  ApplyCall,
  ApplyOrder,
  ApplyTicket,
  BatchCall,
  CheckContext,
  DoctorContext,
  EffectKind,
  EffectSpecBase,
  KindAlias,
  KindContext,
  KindFinding,
  KindGuarantee,
  KindSamples,
  OpenContext,
  ProbeCall,
  ProbeHint,
  ProbeResult,
  ScanCall,
} from "./effect-kind.js";
export {
  hasKeyMarker,
  keyMarker,
  markedKeys,
  refuseKeyMarkers,
  withKeyMarker,
} from "./key-marker.js";
export { kindJsonSchema } from "./kind-json-schema.js";
export type { OpenedKind, OpenKindOptions } from "./open-kind.js";
export { openKind } from "./open-kind.js";
export type { TransientOptions } from "./outcomes.js";
export { absent, conflict, fail, invalid, present, retryAfterMs } from "./outcomes.js";
export { readCappedText } from "./read-capped.js";
