export type {
  DecideEffectInput,
  EffectCapabilities,
  EffectDecision,
} from "./decide-effect.js";
export { decideEffect } from "./decide-effect.js";
export { SupersedeIndex } from "./supersede-index.js";
