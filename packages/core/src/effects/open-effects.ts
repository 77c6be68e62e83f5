import { type CreateEffectsOptions, createEffects, type Effects } from "@idem/effects";
import { createJetStreamPublishTransport } from "@idem/nats";
import type { Config } from "@idem/schema";

/** Options of `openEffects`: those of `createEffects`, with the NATS transport wired in here. */
export type OpenEffectsOptions = Omit<CreateEffectsOptions, "publishTransport">;

/**
 * The effect kinds of `config` (@idem/effects) with nats.publish wired to JetStream (@idem/nats):
 * what every front end and process uses to probe and apply effects. Opens nothing until first use
 * (git processes, repo locks and NATS connections are started lazily).
 *
 * `close()` ends the long-lived git processes, then drains the NATS connections; call it once when
 * done. Probe and apply semantics, replay and failure codes are those of `Effects`.
 */
export function openEffects(config: Config, options: OpenEffectsOptions = {}): Effects {
  const publishTransport = createJetStreamPublishTransport();
  const effects = createEffects(config, { ...options, publishTransport });
  return {
    ...effects,
    async close() {
      try {
        await effects.close();
      } finally {
        await publishTransport.close();
      }
    },
  };
}
