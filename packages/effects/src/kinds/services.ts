import type { OpenContext } from "@idem/kit";
import { IdemError } from "@idem/schema";
import type { GitTargets } from "../git/git-targets.js";
import type { ScratchIndexes } from "../git/patch/scratch-indexes.js";
import type { PublishTransport } from "../publish-transport.js";
import type { PublishStreamChecks } from "./nats-publish/nats-publish-effect.js";

/** The key under which `createEffects` passes its services to idem's own kinds. */
export const EFFECTS_SERVICES = "idem.effects";

/**
 * What idem's built-in kinds share in one process, built by `createEffects` from its options: the
 * git repositories (long-lived git processes, locks) the two git kinds share, the scratch indexes
 * of patch probes, and the NATS transport of `nats.publish`.
 */
export interface EffectsServices {
  readonly git: GitTargets;
  readonly scratch: ScratchIndexes;
  readonly publishTransport: PublishTransport | undefined;
  readonly publishChecks: PublishStreamChecks;
  readonly natsUrl: string | undefined;
}

/**
 * The services a built-in kind's `open` was given.
 * @throws IdemError INVALID_STATE when the kind is opened outside `createEffects`.
 */
export function effectsServices(ctx: Pick<OpenContext<unknown>, "services">): EffectsServices {
  const s = ctx.services[EFFECTS_SERVICES];
  if (s === undefined)
    throw new IdemError("INVALID_STATE", "idem's built-in kinds are opened by createEffects");
  return s as EffectsServices;
}
