import { isNatsUnavailable } from "@idem/nats";
import { isIdemError } from "@idem/schema";

/**
 * What a long-running process waits out at its start: the journal unavailable (PostgreSQL down,
 * starting up or out of reach) and NATS or its JetStream not answering yet (a server restarting,
 * a cluster electing its leaders). Anything else (a bad config, a journal that is not idem's, a
 * refused credential) is not an outage. Pure; never throws.
 */
export function isNotReadyYet(e: unknown): boolean {
  return isIdemError(e, "UNAVAILABLE") || isNatsUnavailable(e);
}
