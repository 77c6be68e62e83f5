import { z } from "zod";
import { DEFAULT_SUBJECT_PREFIX, SUBJECT_PREFIX_PATTERN } from "./subjects.js";

const ms = z.number().int().nonnegative();
const positiveMs = z.number().int().positive();

/**
 * `nats`: JetStream as the transport (servers, stream, subject prefix, duplicate window,
 * retention, replicas).
 *
 * `url` names one server; `servers` lists a cluster's, and the client reconnects across them.
 * `replicas` is the jobs stream's replica count when idem creates it (3 on a cluster of three),
 * checked by `idem doctor`.
 */
export const NatsConfigSchema = z.strictObject({
  url: z.string().min(1).default("nats://127.0.0.1:4222"),
  servers: z.array(z.string().min(1)).default([]),
  stream: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("IDEM_JOBS"),
  subjectPrefix: z.string().regex(SUBJECT_PREFIX_PATTERN).default(DEFAULT_SUBJECT_PREFIX),
  duplicateWindowMs: positiveMs.default(3_600_000),
  maxAgeMs: positiveMs.default(604_800_000),
  publishRetryMs: ms.default(60_000),
  replicas: z.number().int().min(1).max(5).default(1),
});

/** A parsed `nats` section, defaults filled. */
export type NatsConfig = z.infer<typeof NatsConfigSchema>;

/**
 * The servers a client of `nats` connects to, comma-separated as `connectNats` and nats.js take
 * them: `nats.servers` when it lists any, else `nats.url`. Never throws.
 */
export function natsServers(nats: Pick<NatsConfig, "url" | "servers">): string {
  return nats.servers.length > 0 ? nats.servers.join(",") : nats.url;
}
