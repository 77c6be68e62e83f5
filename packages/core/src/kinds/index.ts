// The effect kinds as a person sees them: the listing of `idem kinds` and the conformance drill of
// `idem kinds test` (docs/effect-kinds.md).

export type {
  DrillCheck,
  DrillFinding,
  DrillFindingCode,
  DrillKey,
  DrillStart,
  DrillVerdict,
  KindDrillReport,
} from "@idem/kit";
export { DRILL_FINDINGS, DRILL_VERDICTS, showableGuarantee } from "@idem/kit";
export type {
  DrillInterpret,
  DrillInterpretResult,
  DrillInterpretRun,
} from "./drill-crashes.js";
export type { DrilledKindEntry } from "./drill-workspace.js";
export { drillConfigOf } from "./drill-workspace.js";
export type { KindModule } from "./kind-module.js";
export { loadKindModule, resolveKindModule } from "./kind-module.js";
export type { KindListing, ListedKind } from "./list-kinds.js";
export { listKinds } from "./list-kinds.js";
export type { KindDrillOptions } from "./run-kind-drill.js";
export { DRILL_OUTPUTS_DEFAULT, runKindDrill, verdictOf } from "./run-kind-drill.js";
