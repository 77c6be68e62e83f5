import { describe, expect, it } from "vitest";
import { natsServers, parseConfig } from "../src/index.js";

describe("the nats section on a cluster", () => {
  it("takes a list of servers and a replica count, and connects to the list when it has one", () => {
    const r = parseConfig(
      { nats: { servers: ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222"], replicas: 3 } },
      { dir: "/" },
    );
    expect(r.ok).toBe(true);
    if (!r.ok || !r.config.nats) return;
    expect(r.config.nats.replicas).toBe(3);
    expect(natsServers(r.config.nats)).toBe("nats://10.0.0.1:4222,nats://10.0.0.2:4222");
  });

  it("connects to nats.url with one replica by default", () => {
    const r = parseConfig({ nats: { url: "nats://10.0.0.9:4222" } }, { dir: "/" });
    if (!r.ok || !r.config.nats) throw new Error("expected a config");
    expect(r.config.nats.replicas).toBe(1);
    expect(natsServers(r.config.nats)).toBe("nats://10.0.0.9:4222");
  });

  it("refuses a replica count JetStream cannot hold, naming the key", () => {
    const r = parseConfig({ nats: { replicas: 7 } }, { dir: "/" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.path)).toEqual(["nats.replicas"]);
  });
});
