import { sleep } from "@idem/schema";
import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";

/** A running pull-consumer loop. */
export interface MessageLoop {
  /** Stops pulling, waits for the handlers in flight to finish. Idempotent. */
  stop(): Promise<void>;
  /** Handlers in flight right now. */
  inFlight(): number;
}

/** The consumer a message loop pulls from, how many at once, and its handler. */
export interface StartMessageLoopOptions {
  js: JetStreamClient;
  stream: string;
  consumer: string;
  /** At most this many handlers run at once; also the prefetch (`max_messages`). */
  concurrency: number;
  /** Handles one message; it must settle it (ack, nak, term) itself. */
  handler: (msg: JsMsg) => Promise<void>;
  /** Called with anything a handler or the loop threw; the loop goes on. */
  onError?: (error: unknown, msg?: JsMsg) => void;
  /** Pull request expiry; default 5 s, so a restarted server is noticed quickly. */
  expiresMs?: number;
}

/**
 * Consumes a durable pull consumer with a small prefetch and bounded concurrency, re-opening the
 * subscription forever when it ends (server restart, consumer hiccup) until stopped. Never
 * throws: loop and handler errors go to `onError`. Delivery is at-least-once: the handler settles
 * each message, and one it leaves unacked is redelivered by JetStream after `ack_wait`.
 */
export function startMessageLoop(options: StartMessageLoopOptions): MessageLoop {
  const { js, stream, consumer, handler } = options;
  const concurrency = Math.max(1, options.concurrency);
  const onError = options.onError ?? (() => {});
  const running = new Set<Promise<void>>();
  let stopped = false;
  let current: { stop(): void } | undefined;
  let wake: (() => void) | undefined;

  const slot = async (): Promise<void> => {
    while (running.size >= concurrency) {
      await new Promise<void>((r) => {
        wake = r;
      });
    }
  };

  const loop = (async () => {
    while (!stopped) {
      try {
        const c = await js.consumers.get(stream, consumer);
        const messages = await c.consume({
          max_messages: concurrency,
          expires: options.expiresMs ?? 5_000,
        });
        current = messages;
        if (stopped) {
          messages.stop();
          break;
        }
        for await (const msg of messages) {
          await slot();
          const p = handler(msg)
            .catch((e) => onError(e, msg))
            .finally(() => {
              running.delete(p);
              const w = wake;
              wake = undefined;
              w?.();
            });
          running.add(p);
          if (stopped) break;
        }
      } catch (e) {
        if (!stopped) onError(e);
      }
      if (!stopped) await sleep(250);
    }
  })();

  return {
    inFlight: () => running.size,
    async stop() {
      if (!stopped) {
        stopped = true;
        try {
          current?.stop();
        } catch {
          // already closed
        }
      }
      await loop;
      await Promise.allSettled([...running]);
    },
  };
}
