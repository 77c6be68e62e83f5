import type { JobPublisher } from "@idem/nats";
import type { Config } from "@idem/schema";

/**
 * @idem/nats's `withJobPublisher`, with the NATS client imported only for a config that has a
 * `nats` section (or NATS_URL): `fn` gets no publisher on the embedded queue, as there, and
 * loading that client would only cost the command its start-up.
 * @throws as @idem/nats's `withJobPublisher`: the client's error when NATS cannot be reached;
 * INVARIANT_VIOLATION from `ensureJobsStream`; whatever `fn` throws.
 */
export async function withJobPublisher<T>(
  config: Config,
  name: string,
  fn: (publisher: JobPublisher | undefined) => Promise<T>,
): Promise<T> {
  if (!config.nats) return fn(undefined);
  const nats = await import("@idem/nats");
  return nats.withJobPublisher(config, name, fn);
}
