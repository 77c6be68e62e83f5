// The reading of the @nats-io v3 clients' errors: one function for @idem/nats and @idem/client
// (which imports no NATS package), by the errors' class names, so it needs no NATS package either.

/**
 * What a failure of the NATS client means to idem: no answer in time (`timeout`), the server or its
 * JetStream not answering now (`unavailable`), or a payload over the server's max_payload
 * (`too-large`).
 */
export type NatsFailure = "timeout" | "unavailable" | "too-large";

/** How deep the causes are read: an IdemError over JetStreamNotEnabled over RequestError over NoResponders. */
const MAX_DEPTH = 5;

/**
 * What a thrown value of the @nats-io v3 clients means (see {@link NatsFailure}), read from its
 * error class (`name`) and status code, and then its causes', never from its message, except
 * where nats-core has no class of its own (an `InvalidArgumentError` for the `'payload'`):
 *
 * - `TimeoutError`, and a JetStream status 408: `timeout`;
 * - `NoResponders` (NoRespondersError: a stream not provisioned yet, a server restarting, which
 *   @nats-io/jetstream reports as JetStreamNotEnabled caused by a RequestError caused by it),
 *   `ClosedConnectionError`, `ConnectionError`, a `RequestError` of its own (the connection closed
 *   or was lost with the request in flight) and a JetStream status 503: `unavailable`;
 * - anything else (an AuthorizationError, a PermissionViolationError, JetStream's API errors, a
 *   draining connection, a value that is no error): `undefined`.
 *
 * Used by @idem/nats and @idem/client alike; packages/client/test/nats-failure.test.ts holds it to
 * what the real v3 error classes mean. Pure; never throws.
 */
export function natsFailureOf(e: unknown): NatsFailure | undefined {
  let cur: unknown = e;
  for (let depth = 0; depth < MAX_DEPTH && typeof cur === "object" && cur !== null; depth++) {
    const err = cur as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown };
    switch (err.name) {
      case "TimeoutError":
        return "timeout";
      case "NoResponders":
      case "ClosedConnectionError":
      case "ConnectionError":
        return "unavailable";
      case "RequestError":
        if (err.cause === undefined || err.cause === null) return "unavailable";
        break;
      case "JetStreamStatusError":
        if (err.code === 408) return "timeout";
        if (err.code === 503) return "unavailable";
        return undefined;
      case "InvalidArgumentError":
        return typeof err.message === "string" && err.message.startsWith("'payload'")
          ? "too-large"
          : undefined;
    }
    cur = err.cause;
  }
  return undefined;
}
