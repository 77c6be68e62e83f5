// The NATS client is imported when a connection is first made or used, never at start-up: @idem/core
// imports this package's index (for `isNatsUnavailable`, the publish transport, the doctor's
// checks), so every command loads these modules, and only one whose config names NATS loads
// @nats-io. Type-only imports of @nats-io stay where they are: they cost nothing.
import type * as JetStream from "@nats-io/jetstream";
import type * as Transport from "@nats-io/transport-node";

/** @nats-io/transport-node (connect, headers), imported on the first call. */
export const loadTransport = (): Promise<typeof Transport> => import("@nats-io/transport-node");

/** @nats-io/jetstream (the JetStream client and manager, its enums), imported on the first call. */
export const loadJetStream = (): Promise<typeof JetStream> => import("@nats-io/jetstream");
