// A network that cannot reach the journal's server is an outage like a server that is down (a
// finding of the cluster drill: a host cut off got ENETUNREACH, which was not UNAVAILABLE, so the
// interpreter retried it as an ordinary claim failure and the executor exited at its start).
import { connect } from "node:net";
import { isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { asUnavailable, isConnectionLoss } from "../../src/store/postgres/unavailable.js";

/** A socket error as node's net module makes it, with the given code. */
function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 10.213.0.1:5432`), {
    code,
    errno: -1,
    syscall: "connect",
  });
}

describe("what counts as the journal's server out of reach", () => {
  it.each(["ENETUNREACH", "EHOSTUNREACH", "ENETDOWN", "EHOSTDOWN", "ETIMEDOUT", "ECONNREFUSED"])(
    "%s is a connection loss, answered as UNAVAILABLE naming the journal without its password",
    (code) => {
      expect(isConnectionLoss(socketError(code))).toBe(true);
      const e = asUnavailable(socketError(code), "postgres://idem@db/journal");
      expect(isIdemError(e, "UNAVAILABLE")).toBe(true);
      expect((e as Error).message).toContain("postgres://idem@db/journal");
    },
  );

  it("a real refused connect is one too, and an error with another code is not", async () => {
    const refused = await new Promise<Error>((resolve) => {
      connect(1, "127.0.0.1").once("error", resolve);
    });
    expect(isConnectionLoss(refused)).toBe(true);
    expect(isConnectionLoss(socketError("EACCES"))).toBe(false);
    expect(isConnectionLoss(new Error("syntax error at or near"))).toBe(false);
  });
});
