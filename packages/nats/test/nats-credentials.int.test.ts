// Credentials in a NATS URL (docs/security.md, Credentials): nats.js v3 ignores a server URL's user
// info, so `nats://user:password@host` and `nats://token@host` are taken apart by idem and used, as
// the Go client and the `nats` CLI do; every message names the URL without them.
import { isIdemError } from "@idem/schema";
import { startNatsServer } from "@idem/testing";
import { describe, expect, it } from "vitest";
import {
  closeNats,
  connectNats,
  createJetStreamPublishTransport,
  natsConnectOptions,
} from "../src/index.js";

const withAuth = (url: string, auth: string) => url.replace("nats://", `nats://${auth}@`);

describe("NATS URLs with credentials", () => {
  it("takes user:password and a token out of the URL as the client's credentials", () => {
    expect(natsConnectOptions("nats://a:b%40c@h1:4222, nats://a:b%40c@h2:4222")).toEqual({
      servers: ["nats://h1:4222", "nats://h2:4222"],
      user: "a",
      pass: "b@c",
    });
    expect(natsConnectOptions("nats://t0k@h:4222")).toEqual({
      servers: ["nats://h:4222"],
      token: "t0k",
    });
    expect(natsConnectOptions("nats://h:4222,h2")).toEqual({ servers: ["nats://h:4222", "h2"] });
    let err: unknown;
    try {
      natsConnectOptions("nats://a:b@h1,nats://c:d@h2");
    } catch (e) {
      err = e;
    }
    expect(isIdemError(err, "INVALID_CONFIG")).toBe(true);
    expect(String((err as Error).message)).not.toMatch(/a:b|c:d/);
  });

  it("connects to a server that requires a user and password, and to one that requires a token", async () => {
    await using userServer = await startNatsServer({
      args: ["--user", "idem", "--pass", "s3cret"],
    });
    await using tokenServer = await startNatsServer({ args: ["--auth", "t0ken"] });
    // Without them both refuse: the credentials are what lets the client in.
    await expect(connectNats(userServer.url)).rejects.toThrow();
    const a = await connectNats(withAuth(userServer.url, "idem:s3cret"));
    const b = await connectNats(withAuth(tokenServer.url, "t0ken"));
    try {
      expect(a.isClosed()).toBe(false);
      await a.flush();
      await b.flush();
    } finally {
      await closeNats(a);
      await closeNats(b);
    }
  });

  it("publishes through a publish target's URL with credentials, and never names them in an error", async () => {
    await using server = await startNatsServer({ args: ["--user", "idem", "--pass", "s3cret"] });
    const transport = createJetStreamPublishTransport();
    try {
      // With them it gets in: the server has no such stream, so it is made (a lost store).
      expect(
        (
          await transport.checkStream(withAuth(server.url, "idem:s3cret"), {
            stream: "NONE",
            subjectPrefix: "x",
          })
        ).status,
      ).toBe("ok");
      const err = await transport
        .checkStream(withAuth(server.url, "idem:wr0ng"), { stream: "S", subjectPrefix: "x" })
        .catch((e: unknown) => e as Error);
      expect(isIdemError(err, "UNAVAILABLE")).toBe(true);
      expect((err as Error).message).not.toContain("wr0ng");
      expect((err as Error).message).toContain("nats://***@127.0.0.1");
    } finally {
      await transport.close();
    }
  });
});
