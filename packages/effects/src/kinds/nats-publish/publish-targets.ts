// The `publish` section of the config, owned by nats.publish: its targets by alias, each a subject
// prefix and the stream that must capture it.
import { ALIAS_PATTERN } from "@idem/kit";
import { z } from "zod";

/** `publish.<alias>`: a subject prefix and the stream that must capture it, for `nats.publish`. */
export const PublishTargetSchema = z.strictObject({
  subjectPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "must be dot-separated tokens without wildcards"),
  stream: z.string().regex(/^[A-Za-z0-9_-]+$/, "must be a stream name"),
  url: z.string().nullable().default(null),
});
/** A parsed `publish.<alias>`. */
export type PublishTarget = z.infer<typeof PublishTargetSchema>;

/** The `publish` section: nats.publish's options. */
export const PublishTargetsSchema = z.record(
  z.string().regex(ALIAS_PATTERN, "must be an alias: letters, digits, _ and -"),
  PublishTargetSchema,
);

/** nats.publish's options: every publish target by alias. */
export type PublishTargets = Readonly<Record<string, PublishTarget>>;
