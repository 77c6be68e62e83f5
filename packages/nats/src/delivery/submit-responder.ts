import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { TRACEPARENT_HEADER } from "../job-publisher.js";
import { submitSubject } from "../subjects.js";

/** The queue group every executor's submit responder joins: one of them answers each request. */
export const SUBMIT_QUEUE_GROUP = "idem-executor";

/** One submit request as the responder sees it. */
export interface SubmitRequest {
  /** The body's size in bytes, known before it is decoded. */
  readonly size: number;
  /** The body decoded as UTF-8 (a byte that is not UTF-8 becomes U+FFFD). */
  text(): string;
  /** The body's bytes, for a strict decode. */
  readonly data: Uint8Array;
  /** The request's `traceparent` header (the submitter's trace), if any; not validated here. */
  readonly traceparent: string | undefined;
  /**
   * The agent the subject names (`<prefix>.submit.<agent>`), whose credential the request is held
   * to; undefined on `<prefix>.submit`, the operator's subject.
   */
  readonly agent: string | undefined;
}

/** A running submit responder. */
export interface SubmitResponder {
  /** Stops answering (unsubscribes); requests already taken are still answered. Idempotent. */
  stop(): void;
}

/**
 * Answers requests on `<subjectPrefix>.submit` and `<subjectPrefix>.submit.<agent>` in the
 * {@link SUBMIT_QUEUE_GROUP} queue group: each body goes to `answer` (with the agent its subject
 * names), whose result is sent back as JSON. `answer` must not throw (a throw leaves the requester
 * to its timeout). The subscriptions are registered with the server (flushed) before this
 * resolves.
 */
export async function startSubmitResponder(options: {
  nc: NatsConnection;
  subjectPrefix: string;
  answer: (request: SubmitRequest) => Promise<unknown>;
}): Promise<SubmitResponder> {
  const { nc, answer } = options;
  const operatorSubject = submitSubject(options.subjectPrefix);
  const agentOf = (subject: string) =>
    subject === operatorSubject ? undefined : subject.slice(operatorSubject.length + 1);
  const subs: Subscription[] = [operatorSubject, `${operatorSubject}.*`].map((subject) =>
    nc.subscribe(subject, {
      queue: SUBMIT_QUEUE_GROUP,
      callback: (err, msg) => {
        if (err) return;
        void (async () => {
          const result = await answer({
            size: msg.data.length,
            text: () => msg.string(),
            data: msg.data,
            traceparent: msg.headers?.get(TRACEPARENT_HEADER) || undefined,
            agent: agentOf(msg.subject),
          });
          msg.respond(JSON.stringify(result));
        })();
      },
    }),
  );
  await nc.flush();
  return {
    stop: () => {
      for (const s of subs) s.unsubscribe();
    },
  };
}
