import { IdemError, redactUrl } from "@idem/schema";
import type { NatsConnection } from "@nats-io/transport-node";
import { closeNats, connectNats } from "./connect.js";
import { loadJetStream } from "./nats-client.js";
import { isNotFound } from "./provisioning.js";

/**
 * Publishes small messages (approval notices) on a subject of a NATS server: with JetStream when a
 * stream captures the subject (`Nats-Msg-Id` = the message's id, so a retry within the stream's
 * duplicate window is dropped), else a core publish flushed to the server. One connection per URL,
 * opened on first use, drained by `close()`.
 */
export interface SubjectPublisher {
  /**
   * @returns `jetstream` (stored, or dropped as a duplicate) or `core` (flushed to the server).
   * @throws IdemError UNAVAILABLE when the server cannot be reached or the publish failed.
   */
  publish(
    url: string,
    subject: string,
    data: Uint8Array,
    msgId: string,
  ): Promise<"jetstream" | "core">;
  close(): Promise<void>;
}

/** Whether a JetStream stream captures `subject` (false when the server has no JetStream). */
async function captured(nc: NatsConnection, subject: string): Promise<boolean> {
  const { jetstreamManager } = await loadJetStream();
  try {
    await (await jetstreamManager(nc)).streams.find(subject);
    return true;
  } catch (e) {
    const message = (e as Error).message ?? "";
    if (isNotFound(e) || /no stream matches|not enabled|no responders|503/i.test(message))
      return false;
    throw e;
  }
}

/** How long a core publish waits for the server's answer to its flush (reconnecting, forever). */
const FLUSH_TIMEOUT_MS = 10_000;

/** `nc.flush()`, failing after `ms`: during an outage it would wait for the reconnect. */
async function flushWithin(nc: NatsConnection, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to a flush within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([nc.flush(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens nothing until first use; see `SubjectPublisher`. */
export function createSubjectPublisher(name = "idem-notices"): SubjectPublisher {
  const conns = new Map<string, Promise<NatsConnection>>();
  const get = (url: string): Promise<NatsConnection> => {
    let c = conns.get(url);
    if (!c) {
      c = connectNats(url, name);
      conns.set(url, c);
      c.catch(() => conns.delete(url));
    }
    return c.then((nc) => {
      if (!nc.isClosed()) return nc;
      conns.delete(url);
      return get(url);
    });
  };
  const unavailable = (url: string, subject: string, e: unknown) =>
    new IdemError(
      "UNAVAILABLE",
      `cannot publish on ${subject} at ${redactUrl(url)}: ${(e as Error).message ?? String(e)}`,
      { cause: e },
    );
  return {
    async publish(url, subject, data, msgId) {
      try {
        const nc = await get(url);
        if (await captured(nc, subject)) {
          const { jetstream } = await loadJetStream();
          await jetstream(nc).publish(subject, data, { msgID: msgId, timeout: 10_000 });
          return "jetstream";
        }
        nc.publish(subject, data);
        await flushWithin(nc, FLUSH_TIMEOUT_MS);
        return "core";
      } catch (e) {
        throw unavailable(url, subject, e);
      }
    },
    async close() {
      const all = [...conns.values()];
      conns.clear();
      for (const c of all) {
        const nc = await c.catch(() => undefined);
        if (nc) await closeNats(nc);
      }
    },
  };
}
