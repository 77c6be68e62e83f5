export type {
  DecideEffectInput,
  EffectCapabilities,
  EffectDecision,
} from "./decide-effect.js";
export { decideEffect } from "./decide-effect.js";
export { FileWriteIndex } from "./file-write-index.js";
