import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { startNatsServer } from "../src/index.js";

describe("startNatsServer", () => {
  it("starts a JetStream server on a free port that survives a SIGKILL and restart", async () => {
    await using server = await startNatsServer();
    const nc = await connect({ servers: server.url });
    await nc.flush();
    await nc.close();
    const firstPid = server.pid;
    await server.kill("SIGKILL");
    await server.restart();
    expect(server.pid).not.toBe(firstPid);
    const nc2 = await connect({ servers: server.url });
    await nc2.flush();
    await nc2.close();
  });
});
