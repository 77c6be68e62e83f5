export type { CreateEffectsOptions } from "./create-effects.js";
export { createEffects } from "./create-effects.js";
export type {
  ApplyOrder,
  ApplyTicket,
  EffectHandler,
  Effects,
  ProbeHint,
  ProbeResult,
} from "./effect-handler.js";
export { keyRef } from "./git/key-index.js";
export { parsePatchFiles } from "./git/patch/patch-paths.js";
export type { CloneProgress } from "./git/remote/remote-git.js";
export type {
  PublishTransport,
  TransportMessage,
  TransportPubAck,
  TransportStreamCheck,
} from "./publish-transport.js";
export { staticEffectIssues } from "./static-checks.js";
