import { natsFailureOf } from "@idem/schema";

/**
 * Whether a NATS client error means the server or its JetStream is not answering now, and a later
 * attempt may succeed: {@link natsFailureOf} says `timeout` or `unavailable`. What a job publish
 * retries with its msg id, and what a process starting during an outage waits out. Pure; never
 * throws.
 */
export function isNatsUnavailable(e: unknown): boolean {
  const failure = natsFailureOf(e);
  return failure === "timeout" || failure === "unavailable";
}
