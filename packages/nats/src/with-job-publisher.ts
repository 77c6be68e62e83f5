import { type Config, natsServers } from "@idem/schema";
import { closeNats, connectNats } from "./connect.js";
import { createJobPublisher, type JobPublisher } from "./job-publisher.js";
import { loadJetStream } from "./nats-client.js";
import { ensureJobsStream } from "./provisioning.js";

/**
 * Runs `fn` with a job publisher on JetStream (the jobs stream created when missing), or with none
 * on the embedded queue. The connection is drained afterwards, or closed if the server is gone, so
 * a command that failed during an outage exits.
 * @throws the client's error when NATS cannot be reached; INVARIANT_VIOLATION from
 * `ensureJobsStream`; whatever `fn` throws.
 */
export async function withJobPublisher<T>(
  config: Config,
  name: string,
  fn: (publisher: JobPublisher | undefined) => Promise<T>,
): Promise<T> {
  if (!config.nats) return fn(undefined);
  const nc = await connectNats(natsServers(config.nats), name);
  try {
    const { jetstream, jetstreamManager } = await loadJetStream();
    await ensureJobsStream(await jetstreamManager(nc), config.nats);
    return await fn(createJobPublisher({ js: jetstream(nc), nats: config.nats }));
  } finally {
    await closeNats(nc);
  }
}
