// The effects façade (`Effects` of @idem/effects): every effect kind of a config, with nats.publish
// wired to the NATS transport of @idem/nats.
export type { Effects } from "@idem/effects";
export type { OpenEffectsOptions } from "./open-effects.js";
export { openEffects } from "./open-effects.js";
