/** One message for a publish target's stream. */
export interface TransportMessage {
  subject: string;
  data: Uint8Array;
  /** Sent as `Nats-Msg-Id`: the stream drops a repeat within its duplicate window. */
  msgId: string;
  headers?: Readonly<Record<string, string>>;
  /** The stream that must store it. */
  stream: string;
}

/** The stream's answer to a publish: `duplicate` when it dropped a repeat of the msg id. */
export interface TransportPubAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/** What a publish target's stream is on its server. */
export type TransportStreamCheck =
  | { status: "ok" }
  | { status: "missing"; cause: unknown }
  | { status: "uncovered"; subjects: string[] };

/**
 * The port through which the nats.publish effect reaches a broker (kinds are independent of the
 * transport package): @idem/nats implements it (`createJetStreamPublishTransport`) and @idem/core
 * wires it in (`openEffects`). Whoever creates it closes it; `Effects.close()` does not.
 */
export interface PublishTransport {
  /**
   * Reads the target's stream on the server at `url`: `ok` when it captures `<subjectPrefix>.>`,
   * `missing` when it cannot be read, `uncovered` (with its subjects) otherwise. Never writes.
   * @throws IdemError UNAVAILABLE when the server cannot be reached.
   */
  checkStream(
    url: string,
    target: { stream: string; subjectPrefix: string },
  ): Promise<TransportStreamCheck>;
  /**
   * Publishes once with `Nats-Msg-Id` and awaits the stream's ack. A repeat of the msg id within the
   * stream's duplicate window answers `duplicate: true` and stores nothing.
   * @throws IdemError UNAVAILABLE, TIMEOUT (it may have been stored: retrying with the same msg id
   * is safe), TARGET_CONFLICT (it landed in another stream).
   */
  publish(url: string, message: TransportMessage): Promise<TransportPubAck>;
}
