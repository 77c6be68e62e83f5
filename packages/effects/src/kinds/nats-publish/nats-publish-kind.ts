import { type AnyEffectKind, aliasOf, defineEffectKind, IdemError } from "@idem/kit";
import type { PublishTransport } from "../../publish-transport.js";
import { checkHeaders, checkingField } from "../../sandbox.js";
import { publishDoctor } from "./nats-publish-doctor.js";
import {
  type NatsPublisher,
  PublishStreamChecks,
  publishEffect,
  publishSubject,
} from "./nats-publish-effect.js";
import { type PublishTargets, PublishTargetsSchema } from "./publish-targets.js";
import { type NatsPublishSpec, NatsPublishSpecSchema } from "./spec.js";

/**
 * `nats.publish`: one JSON message on `<target prefix>.<subject>` in JetStream with the effect key
 * as `Nats-Msg-Id`. It cannot be probed; the target's stream drops a repeat of the key within its
 * duplicate window (target dedup). Its options are the config's `publish` section; it reaches the
 * broker through `transport` (made once per host by its `open`, closed by its `close`: @idem/nats's
 * JetStream transport, which @idem/core's `loadKinds` passes). Without one, an apply fails with
 * INVALID_STATE after the spec's checks.
 */
export function createNatsPublishKind(transport?: () => PublishTransport): AnyEffectKind {
  return defineEffectKind<NatsPublishSpec, PublishTargets, NatsPublisher>({
    name: "nats.publish",
    description:
      "Publishes one JSON message on a configured publish target's subject in JetStream, deduplicated by the stream with the effect key as Nats-Msg-Id.",
    guarantee: "target-dedup",
    spec: NatsPublishSpecSchema,
    configSection: "publish",
    configSectionOptional: true,
    options: PublishTargetsSchema,
    check(spec, ctx) {
      const t = aliasOf(ctx.options, spec.target);
      if (!t) {
        ctx.issue("target", `unknown publish target "${spec.target}"`);
        return;
      }
      const full = `${t.subjectPrefix}.${spec.subject}`;
      const own = ctx.nats?.subjectPrefix ?? "idem";
      if (full === own || full.startsWith(`${own}.`)) {
        ctx.issue("subject", `"${full}" is one of idem's own subjects`);
        return;
      }
      checkingField("subject", () => {
        publishSubject(ctx.nats, t, spec.subject);
        checkHeaders(spec.headers, true);
      });
    },
    aliases: (spec) => [{ type: "target", name: spec.target }],
    knownAliases: (ctx) => Object.keys(ctx.options).map((name) => ({ type: "target", name })),
    approval: { facts: ["subject"], factsOf: (spec) => ({ subject: spec.subject }) },
    describe: (spec) => `${spec.target}: ${spec.subject}`,
    probeable: () => false,
    targetDedup: () => true,
    open: (ctx) => ({
      targets: ctx.options,
      nats: ctx.nats,
      transport: transport?.(),
      checks: new PublishStreamChecks(),
    }),
    async close(p) {
      p.checks.clear();
      await p.transport?.close?.();
    },
    probe: () =>
      Promise.reject(
        new IdemError(
          "INVALID_STATE",
          "nats.publish cannot be probed; it is deduplicated by its stream",
        ),
      ),
    apply: (spec, call) => publishEffect(call.resource, spec, call.key),
    doctor: (ctx) => publishDoctor(ctx, transport),
  });
}

/** idem's nats.publish without a transport (its checks, its listing; an apply fails). */
export const natsPublishKind = createNatsPublishKind();
