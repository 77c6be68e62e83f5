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

/** A publish target's stream as its server holds it (`inspectStream`). */
export interface TransportStreamState {
  subjects: string[];
  /** Whether the subjects capture `<subjectPrefix>.>`. */
  captures: boolean;
  replicas: number;
}

/** What a publish target's stream is on its server. */
export type TransportStreamCheck =
  | { status: "ok" }
  | { status: "missing"; cause: unknown }
  | { status: "uncovered"; subjects: string[] };

/**
 * The port through which the nats.publish effect reaches a broker (kinds are independent of the
 * transport package): @idem/nats implements it (`createJetStreamPublishTransport`) and @idem/core
 * hands its factory to the catalog (`loadKinds`). The kind makes one per host in its `open` and
 * closes it in its `close`.
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
  /**
   * Reads the target's stream back for `idem doctor` on a connection bounded by `timeoutMs`:
   * `"missing"`, or its subjects, whether they capture `<subjectPrefix>.>` and its replicas.
   * Read-only.
   * @throws IdemError UNAVAILABLE (its cause the client's error) when the server cannot be reached;
   *   the client's error when the stream cannot be read for another reason.
   */
  inspectStream(
    url: string,
    target: { stream: string; subjectPrefix: string },
    options: { timeoutMs: number },
  ): Promise<TransportStreamState | "missing">;
  /** Drains every connection it opened. */
  close?(): Promise<void>;
}
