// The reading of NATS errors that the client and @idem/nats share (@idem/schema's natsFailureOf,
// which imports no NATS package) held to what the real v3 error classes mean.
import { isNatsUnavailable } from "@idem/nats";
import { IdemError, natsFailureOf } from "@idem/schema";
import { JetStreamApiError, JetStreamStatusError, jserrors } from "@nats-io/jetstream/internal";
import {
  AuthorizationError,
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  InvalidArgumentError,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";

const noResponders = () =>
  new jserrors.JetStreamNotEnabled("jetstream is not enabled", {
    cause: new RequestError("no responders: 'idem.jobs.w'", {
      cause: new NoRespondersError("idem.jobs.w"),
    }),
  });

const CASES: [what: string, error: unknown, failure: string | undefined][] = [
  ["a request timeout", new TimeoutError(), "timeout"],
  ["a JetStream 408 status", new JetStreamStatusError("request timeout", 408), "timeout"],
  ["no responders, as a JetStream publish reports it", noResponders(), "unavailable"],
  [
    "the same under an IdemError",
    new IdemError("UNAVAILABLE", "publishing failed", { cause: noResponders() }),
    "unavailable",
  ],
  ["a JetStream 503 status", new JetStreamStatusError("no responders", 503), "unavailable"],
  ["a closed connection", new ClosedConnectionError(), "unavailable"],
  ["a connection refused", new ConnectionError("connection refused"), "unavailable"],
  [
    "a request lost with its connection",
    new RequestError("connection disconnected"),
    "unavailable",
  ],
  [
    "a payload over max_payload",
    InvalidArgumentError.format("payload", "max_payload size exceeded"),
    "too-large",
  ],
  ["another invalid argument", InvalidArgumentError.format("timeout", "must be > 0"), undefined],
  ["a refused credential", new AuthorizationError("authorization violation"), undefined],
  [
    "a permission violation behind a request",
    new RequestError("Permissions Violation for Publish to timeout.x", {
      cause: new PermissionViolationError("Permissions Violation", "publish", "timeout.x"),
    }),
    undefined,
  ],
  ["a draining connection", new DrainingConnectionError(), undefined],
  [
    "a JetStream API error",
    new JetStreamApiError({ err_code: 10059, code: 404, description: "stream not found" }),
    undefined,
  ],
  ["a plain error whose message says timeout", new Error("timeout: closed"), undefined],
  ["no error at all", "timeout", undefined],
];

describe("natsFailureOf", () => {
  it.each(CASES)("reads %s by its class, not its message", (_what, error, failure) => {
    expect(natsFailureOf(error)).toBe(failure);
  });

  it("is what @idem/nats retries on: unavailable for a timeout or an unavailable server only", () => {
    for (const [what, error, failure] of CASES) {
      expect(isNatsUnavailable(error), what).toBe(
        failure === "timeout" || failure === "unavailable",
      );
    }
  });
});
