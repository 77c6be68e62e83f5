import { type Config, IdemError, natsServers, retry } from "@idem/schema";
import type { JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { closeNats, connectNats } from "./connect.js";
import { createJobPublisher, type JobPublisher } from "./job-publisher.js";
import { loadJetStream } from "./nats-client.js";
import { isNatsUnavailable } from "./nats-unavailable.js";
import { ensureJobsStream } from "./provisioning.js";

/** The waits between two attempts to reach JetStream: 100 ms, doubling to 2 s. */
const SETUP_BACKOFF = { initialMs: 100, maxMs: 2_000 } as const;

/**
 * Whether JetStream did not answer now but may soon: the client's own view (`isNatsUnavailable`:
 * a timeout, no responders, a lost connection), or a JetStream API answer of 503 (a cluster
 * without a meta or stream leader yet: "JetStream system temporarily unavailable"). Pure.
 */
export function isJetStreamUnavailable(e: unknown): boolean {
  if (isNatsUnavailable(e)) return true;
  const err = e as { name?: unknown; status?: unknown };
  return err?.name === "JetStreamApiError" && err.status === 503;
}

/**
 * The JetStream manager of `nc` and the jobs stream, created when missing: the account-info request
 * (`jetstreamManager`) and the stream's info (or add) are retried while JetStream does not answer
 * ({@link isJetStreamUnavailable}: a cluster electing a meta or stream leader after a node died,
 * a server restarting), with a backoff, until `nats.publishRetryMs` has passed since the first
 * attempt: the same deadline each publish then has.
 * @throws UNAVAILABLE naming the deadline, the last failure as its cause; INVARIANT_VIOLATION from
 * `ensureJobsStream` at once (a stream that differs is not an election).
 */
export async function openJobsStream(
  nc: NatsConnection,
  nats: NonNullable<Config["nats"]>,
  now: () => number = Date.now,
): Promise<JetStreamManager> {
  const { jetstreamManager } = await loadJetStream();
  const deadline = now() + nats.publishRetryMs;
  try {
    return await retry(
      async () => {
        const jsm = await jetstreamManager(nc);
        await ensureJobsStream(jsm, nats);
        return jsm;
      },
      { ...SETUP_BACKOFF, retryable: (e) => isJetStreamUnavailable(e) && now() < deadline },
    );
  } catch (e) {
    if (!isJetStreamUnavailable(e)) throw e;
    throw new IdemError(
      "UNAVAILABLE",
      `JetStream did not answer within nats.publishRetryMs (${nats.publishRetryMs} ms): the stream ${nats.stream} could not be read`,
      { cause: e, details: { stream: nats.stream } },
    );
  }
}

/**
 * Runs `fn` with a job publisher on JetStream (the jobs stream created when missing), or with none
 * on the embedded queue. Rides out a cluster's leader election and a node's death: connecting
 * tries every server, reaching JetStream is retried ({@link openJobsStream}) and so is each publish,
 * each within `nats.publishRetryMs`. The connection is drained afterwards, or closed if the server
 * is gone, so a command that failed during an outage exits.
 * @throws the client's error when no NATS server can be reached at all; UNAVAILABLE when JetStream
 * (or a publish's PubAck) did not answer within `nats.publishRetryMs`; INVARIANT_VIOLATION from
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
    const { jetstream } = await loadJetStream();
    await openJobsStream(nc, config.nats);
    return await fn(createJobPublisher({ js: jetstream(nc), nats: config.nats }));
  } finally {
    await closeNats(nc);
  }
}
