import { defineEffectKind } from "@idem/kit";
import { aliasOf } from "@idem/schema";
import { checkHeaders, checkingField } from "../../sandbox.js";
import { effectsServices } from "../services.js";
import { createNatsPublishHandler, publishSubject } from "./nats-publish-effect.js";
import { NatsPublishSpecSchema } from "./spec.js";

/**
 * `nats.publish`: one JSON message on `<target prefix>.<subject>` in JetStream with the effect key
 * as `Nats-Msg-Id`. It cannot be probed; the target's stream drops a repeat of the key within its
 * duplicate window (target dedup).
 */
export const natsPublishKind = defineEffectKind({
  name: "nats.publish",
  description:
    "Publishes one JSON message on a configured publish target's subject in JetStream, deduplicated by the stream with the effect key as Nats-Msg-Id.",
  guarantee: "target-dedup",
  spec: NatsPublishSpecSchema,
  check(spec, ctx) {
    const t = aliasOf(ctx.config.publish, spec.target);
    if (!t) {
      ctx.issue("target", `unknown publish target "${spec.target}"`);
      return;
    }
    const full = `${t.subjectPrefix}.${spec.subject}`;
    const own = ctx.config.nats?.subjectPrefix ?? "idem";
    if (full === own || full.startsWith(`${own}.`)) {
      ctx.issue("subject", `"${full}" is one of idem's own subjects`);
      return;
    }
    checkingField("subject", () => {
      publishSubject(ctx.config, t, spec.subject);
      checkHeaders(spec.headers, true);
    });
  },
  aliases: (spec) => [{ type: "target", name: spec.target }],
  knownAliases: (ctx) => Object.keys(ctx.config.publish).map((name) => ({ type: "target", name })),
  describe: (spec) => `${spec.target}: ${spec.subject}`,
  probeable: () => false,
  targetDedup: () => true,
  open(ctx) {
    const s = effectsServices(ctx);
    return createNatsPublishHandler(ctx.config, s.publishTransport, s.publishChecks, s.natsUrl);
  },
  probe: (spec, call) => call.resource.probe(spec, call.key, call.hint),
  apply: (spec, call) => call.resource.apply(spec, call.key, call.probed, call.order),
});
