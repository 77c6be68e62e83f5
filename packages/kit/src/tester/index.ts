// @idem/kit/test: a kind's conformance in process, for its own test suite (docs/effect-kinds.md).
export type { CrashAt, SeenRequest } from "./injected-crash.js";
export { InjectedCrash } from "./injected-crash.js";
export type {
  KindTestFinding,
  KindTestFindingCode,
  KindTestReport,
  KindTestScenario,
} from "./kind-test-report.js";
export { KIND_TEST_BLIND_SPOTS, KIND_TEST_FINDINGS } from "./kind-test-report.js";
export type { TestKindOptions } from "./test-kind.js";
export { assertKind, testKind } from "./test-kind.js";
