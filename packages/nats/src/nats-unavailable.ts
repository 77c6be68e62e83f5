/**
 * Whether a NATS client error means the server or its JetStream is not answering now, and a later
 * attempt may succeed: a timeout, no responders, a 503, a disconnect or reconnect, a connection
 * that could not be made. The causes are read too: @nats-io/jetstream reports "no responders" (a
 * stream not provisioned yet, a server restarting) as JetStreamNotEnabled with the RequestError as
 * its cause. What a job publish retries with its msg id, and what a process starting during an
 * outage waits out. Pure; never throws.
 */
export function isNatsUnavailable(e: unknown): boolean {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; depth < 3 && typeof cur === "object" && cur !== null; depth++) {
    const err = cur as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown };
    for (const v of [err.name, err.code, err.message]) if (typeof v === "string") parts.push(v);
    cur = err.cause;
  }
  const text = parts.join(" ").toLowerCase();
  return (
    text.includes("timeout") ||
    text.includes("no responders") ||
    text.includes("503") ||
    text.includes("disconnect") ||
    text.includes("closed") ||
    text.includes("reconnect") ||
    text.includes("connectionerror")
  );
}
