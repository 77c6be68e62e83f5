// @idem/kit: write an effect kind of your own (docs/effect-kinds.md). idem's built-in kinds are
// written with the same API, and import nothing of idem but this package.

// What of idem's vocabulary a kind needs: its errors and their codes, time, the parts specs are
// built from, and the scrubbing of credentials from what it says.
export type { Clock, ErrorCode, IdemErrorOptions } from "@idem/schema";
export {
  ALIAS_PATTERN,
  AliasSchema,
  aliasOf,
  ERROR_CODES,
  HeadersSchema,
  HttpHeadersSchema,
  IdemError,
  isIdemError,
  JsonValueSchema,
  ManualClock,
  NO_CREDENTIALS,
  positiveMs,
  redactSecret,
  redactUrl,
  sleep,
  sleepOn,
  systemClock,
  unsafeHttpHeaderValue,
  unsafeUrlPath,
  urlHasCredentials,
} from "@idem/schema";
export {
  defineEffectKind,
  isKindName,
  KIND_NAME_PATTERN,
  kindSchemaProblem,
  ZOD_EXPECTED,
} from "./define-effect-kind.js";
export { missingCredential, unreachable } from "./doctor-checks.js";
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
export {
  DRILL_BLIND_SPOTS,
  DRILL_FINDINGS,
  DRILL_VERDICTS,
  verdictWords,
} from "./drill-report.js";
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
  HostNats,
  KindAlias,
  KindContext,
  KindFinding,
  KindGuarantee,
  KindLimits,
  KindLock,
  KindProgress,
  KindSamples,
  OpenContext,
  OptionsSource,
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
export type { KindApproval } from "./kind-approval.js";
export { showableGuarantee } from "./kind-guarantee.js";
export type {
  KindHost,
  KindHostOptions,
  KindOptionsIssue,
  KindOptionsSource,
} from "./kind-host.js";
export {
  createKindHost,
  DEFAULT_KIND_LIMITS,
  kindContextOf,
  parseKindOptions,
  safeParseKindOptions,
} from "./kind-host.js";
export { kindJsonSchema } from "./kind-json-schema.js";
export type { PlaceType } from "./kind-places.js";
export { PLACE_TYPES } from "./kind-places.js";
export type { OpenedKind, OpenKindOptions } from "./open-kind.js";
export { openKind } from "./open-kind.js";
export type { TransientOptions } from "./outcomes.js";
export { absent, conflict, fail, invalid, present, retryAfterMs } from "./outcomes.js";
export type { TextPrefix } from "./read-capped.js";
export { readCappedText, readTextPrefix } from "./read-capped.js";
export { redactSent, sentForms } from "./redact-sent.js";
export {
  GIT_ATTRIBUTES_MAX_LINE,
  gitAttributesIssue,
  isGitAttributesPath,
  RelativePathSchema,
  unsafeGitPath,
  unsafeRelativePath,
} from "./relative-path.js";

// What a kind's author reaches for, by the phase of idem that calls it (docs/effect-kinds.md):
//
// - The four a kind must have: `name`, `spec` (its zod schema), `probe` (present, absent or
//   conflict) and `apply`, given to `defineEffectKind` (with `description` and `guarantee`).
// - Load (config and `idem kinds`): `options`, `configSection`, `resolveOptions`,
//   `parseKindOptions`, `kindJsonSchema`, `PLACE_TYPES`.
// - Record (before an output is kept): `check` with `CheckContext`, `invalid`, `targets`,
//   `aliases`, `supersedeKey`, `describe`; the spec parts `AliasSchema`, `RelativePathSchema`,
//   `HeadersSchema`, `JsonValueSchema`.
// - Interpret (probe, then apply): `open` with `OpenContext`, `ProbeCall`, `ApplyCall`,
//   `present`, `absent`, `conflict`, `fail.*`, `retryAfterMs`, the capped reads
//   (`readCappedText`, `readTextPrefix`) and `redactSent`, the key marker
//   (`withKeyMarker`, `hasKeyMarker`, `refuseKeyMarkers`), `probeBatch`, `scan`, `faultPoints`.
// - Operate (`idem doctor`, `idem status`): `doctor` with `DoctorContext`, `locks`.
// - Test: `openKind`, `createKindHost`, `samples`, and `drillKind` of `@idem/kit/drill`.
