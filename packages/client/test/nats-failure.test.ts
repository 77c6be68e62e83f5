// The client's reading of NATS errors and @idem/nats's are the same function (the client imports no
// NATS package, so it keeps a copy): both are held here to what the real v3 error classes mean.
import { natsFailureOf as natsFailureOfIdemNats } from "@idem/nats";
import { IdemError } from "@idem/schema";
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
import { natsFailureOf } from "../src/nats-failure.js";

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

  it("answers as @idem/nats's natsFailureOf does for every case", () => {
    for (const [what, error] of CASES) {
      expect(natsFailureOf(error), what).toBe(natsFailureOfIdemNats(error));
    }
  });
});
