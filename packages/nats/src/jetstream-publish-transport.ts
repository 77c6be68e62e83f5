import { IdemError, type PublishTarget, redactUrl } from "@idem/schema";
import type { NatsConnection } from "@nats-io/transport-node";
import { natsConnectOptions } from "./connect.js";
import { expectedPublishStream, streamCaptures } from "./expected-config.js";
import { loadJetStream, loadTransport } from "./nats-client.js";
import { isNotFound } from "./provisioning.js";

/** One message for a publish target's stream. */
export interface TargetMessage {
  subject: string;
  data: Uint8Array;
  /** Sent as `Nats-Msg-Id`: the stream drops a repeat within its duplicate window. */
  msgId: string;
  headers?: Readonly<Record<string, string>>;
  /** The stream that must store it (`expect.streamName`). */
  stream: string;
}

/** The stream's answer to a publish: `duplicate` when it dropped a repeat of the msg id. */
export interface TargetPubAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/** What a publish target's stream is on its server. */
export type TargetStreamCheck =
  | { status: "ok" }
  | { status: "missing"; cause: unknown }
  | { status: "uncovered"; subjects: string[] };

/**
 * JetStream publishing for the nats.publish effect: one connection per URL, opened on first use
 * (5 s connect timeout, the client's default reconnects) and drained by `close()`. It implements
 * the `PublishTransport` port of @idem/effects.
 */
export interface JetStreamPublishTransport {
  /**
   * Reads the target's stream: `ok` when it captures `<subjectPrefix>.>` (`expectedPublishStream`),
   * `missing` when it cannot be read, `uncovered` with its subjects otherwise. A stream the server
   * does not have (a NATS store lost with its streams) is created first, capturing
   * `<subjectPrefix>.>` on file storage with a 1 h duplicate window (`PUBLISH_STREAM_DEFAULTS`), so
   * publishes land again; one that exists is never changed. Not cached.
   * @throws IdemError UNAVAILABLE when it cannot connect to `url`.
   */
  checkStream(
    url: string,
    target: Pick<PublishTarget, "stream" | "subjectPrefix">,
  ): Promise<TargetStreamCheck>;
  /**
   * Publishes once with `Nats-Msg-Id` and awaits the PubAck (10 s). A retry with the same msg id
   * inside the stream's duplicate window answers `duplicate: true` instead of storing it again.
   * @throws IdemError UNAVAILABLE (cannot connect, or the publish failed), TIMEOUT (no PubAck in
   * time: it may have been stored; retrying with the same msg id is safe), TARGET_CONFLICT (the
   * message landed in another stream than `stream`).
   */
  publish(url: string, message: TargetMessage): Promise<TargetPubAck>;
  /** Drains every connection (closing one whose drain fails). Idempotent. */
  close(): Promise<void>;
}

/**
 * How a publish target's stream idem creates (because the server has none: a lost store) is made:
 * file storage, and a duplicate window as `nats.duplicateWindowMs`'s default (1 h), so a replay of
 * a publish within it is dropped. Anything more (replicas, limits) is the owner's to set again.
 */
export const PUBLISH_STREAM_DEFAULTS = {
  storage: "file",
  duplicate_window: 3_600_000 * 1_000_000,
} as const;

/** Opens nothing until first use; see `JetStreamPublishTransport`. */
export function createJetStreamPublishTransport(): JetStreamPublishTransport {
  const conns = new Map<string, Promise<NatsConnection>>();
  const get = (url: string): Promise<NatsConnection> => {
    let c = conns.get(url);
    if (!c) {
      c = loadTransport()
        .then(({ connect }) =>
          connect({ ...natsConnectOptions(url), name: "idem-effects", timeout: 5000 }),
        )
        .catch((e: unknown) => {
          conns.delete(url);
          throw new IdemError(
            "UNAVAILABLE",
            `cannot connect to NATS at ${redactUrl(url)}: ${(e as Error).message}`,
            { cause: e },
          );
        });
      conns.set(url, c);
    }
    return c.then((nc) => {
      if (nc.isClosed()) {
        conns.delete(url);
        return get(url);
      }
      return nc;
    });
  };
  return {
    async checkStream(url, target) {
      const nc = await get(url);
      const expected = expectedPublishStream(target);
      const { jetstreamManager } = await loadJetStream();
      const jsm = await jetstreamManager(nc);
      let subjects: string[];
      try {
        subjects = (await jsm.streams.info(expected.name)).config.subjects ?? [];
      } catch (e) {
        if (!isNotFound(e)) return { status: "missing", cause: e };
        try {
          const made = await jsm.streams.add({
            name: expected.name,
            subjects: [expected.captures],
            ...PUBLISH_STREAM_DEFAULTS,
          });
          subjects = made.config.subjects ?? [];
        } catch (addErr) {
          // Another process made it meanwhile: read what it made.
          try {
            subjects = (await jsm.streams.info(expected.name)).config.subjects ?? [];
          } catch {
            return { status: "missing", cause: addErr };
          }
        }
      }
      return streamCaptures(expected, subjects)
        ? { status: "ok" }
        : { status: "uncovered", subjects };
    },

    async publish(url, message) {
      const nc = await get(url);
      const [{ headers }, { jetstream }] = await Promise.all([loadTransport(), loadJetStream()]);
      const h = headers();
      for (const [k, v] of Object.entries(message.headers ?? {})) h.set(k, v);
      const { subject } = message;
      try {
        const ack = await jetstream(nc).publish(subject, message.data, {
          msgID: message.msgId,
          headers: h,
          expect: { streamName: message.stream },
          timeout: 10_000,
        });
        return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
      } catch (e) {
        const msg = (e as Error).message ?? String(e);
        if (/timeout|TIMEOUT/.test(msg))
          throw new IdemError("TIMEOUT", `publish to ${subject} timed out`, { cause: e });
        if (/expected stream|wrong last/i.test(msg)) {
          throw new IdemError(
            "TARGET_CONFLICT",
            `publish to ${subject} did not land in stream ${message.stream}: ${msg}`,
            { cause: e },
          );
        }
        throw new IdemError("UNAVAILABLE", `publish to ${subject} failed: ${msg}`, { cause: e });
      }
    },

    async close() {
      const all = [...conns.values()];
      conns.clear();
      for (const c of all) {
        const nc = await c.catch(() => undefined);
        await nc?.drain().catch(() => nc.close());
      }
    },
  };
}
