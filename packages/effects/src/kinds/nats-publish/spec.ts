import { AliasSchema, HeadersSchema, JsonValueSchema } from "@idem/kit";
import { z } from "zod";

/**
 * `nats.publish`: one message on `<target prefix>.<subject>`.
 *
 * Deduplicated by JetStream with the effect key as Nats-Msg-Id.
 */
export const NatsPublishSpecSchema = z.strictObject({
  kind: z.literal("nats.publish"),
  target: AliasSchema,
  subject: z
    .string()
    .min(1)
    .max(255)
    .regex(
      /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/,
      "must be dot-separated tokens: no wildcards, $ or spaces",
    ),
  data: JsonValueSchema,
  headers: HeadersSchema.optional(),
});
/** A parsed `nats.publish` effect. */
export type NatsPublishSpec = z.infer<typeof NatsPublishSpecSchema>;
