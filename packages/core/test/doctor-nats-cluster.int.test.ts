// idem doctor and stream provisioning on a three-node JetStream cluster (nats.servers,
// nats.replicas): a jobs stream with fewer replicas than configured is a violation naming
// num_replicas, provisioning moves it to the configured count in place, a publish target's stream
// with fewer replicas is named too, and a cluster that lost its quorum is a violation.
import { connectNats, ensureJobsStream } from "@idem/nats";
import { type Config, parseConfig } from "@idem/schema";
import { type NatsClusterHandle, startNatsCluster } from "@idem/testing";
// Provisioning through the JetStream client is test setup only (tests sit outside the import rules).
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDoctor } from "../src/doctor/run-doctor.js";

let cluster: NatsClusterHandle;
beforeAll(async () => {
  cluster = await startNatsCluster({ size: 3 });
}, 180_000);
afterAll(async () => {
  await cluster?.stop();
});

function config(replicas: number): Config {
  const r = parseConfig(
    { nats: { servers: cluster.urls, stream: "CL_JOBS", subjectPrefix: "cl", replicas } },
    { dir: "/tmp" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}
const natsViolations = <F extends { severity: string; key: string }>(findings: F[]) =>
  findings.filter((f) => f.severity === "violation" && f.key.startsWith("nats"));

describe("doctor and provisioning on a JetStream cluster of three", () => {
  it("names a jobs stream with fewer replicas than nats.replicas, and provisioning fixes it in place", async () => {
    const nc = await connectNats(cluster.urls.join(","));
    try {
      const jsm = await jetstreamManager(nc);
      const one = config(1).nats as NonNullable<Config["nats"]>;
      await ensureJobsStream(jsm, one);
      const report = await runDoctor(config(3));
      const found = natsViolations(report.findings);
      expect(found).toHaveLength(1);
      expect(found[0]?.finding).toMatch(
        /^stream CL_JOBS: num_replicas is 1 on the server, expected 3/,
      );

      const three = config(3).nats as NonNullable<Config["nats"]>;
      const info = await ensureJobsStream(jsm, three);
      expect(info.config.num_replicas).toBe(3);
      await cluster.waitForStreamLeader("CL_JOBS", 3);
      expect(natsViolations((await runDoctor(config(3))).findings)).toEqual([]);
    } finally {
      await nc.close();
    }
  }, 300_000);

  it("names a publish target's stream on the cluster with fewer replicas than nats.replicas", async () => {
    const nc = await connectNats(cluster.urls.join(","));
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: "CL_EVENTS", subjects: ["clev.>"], num_replicas: 1 });
      const withTarget = (): Config => {
        const c = config(3);
        return {
          ...c,
          sections: { publish: { events: { subjectPrefix: "clev", stream: "CL_EVENTS" } } },
        };
      };
      const found = (await runDoctor(withTarget())).findings.filter(
        (f) => f.severity === "violation" && f.key === "publish.events.stream",
      );
      expect(found.map((f) => f.finding)).toEqual([
        "stream CL_EVENTS has 1 replica(s), fewer than nats.replicas 3",
      ]);
      await jsm.streams.update("CL_EVENTS", { subjects: ["clev.>"], num_replicas: 3 });
      await cluster.waitForStreamLeader("CL_EVENTS", 3);
      const after = (await runDoctor(withTarget())).findings;
      expect(
        after.filter((f) => f.severity === "violation" && f.key.startsWith("publish.")),
      ).toEqual([]);
    } finally {
      await nc.close();
    }
  }, 300_000);

  it("reports a cluster without quorum as a violation, and nothing once it is back", async () => {
    const [a, b] = cluster.nodes;
    await a?.kill("SIGKILL");
    await b?.kill("SIGKILL");
    try {
      // The node left learns that its peers are gone within its raft timeouts (seconds): until
      // then it still answers for the stream. Asked again until it knows, within a bound.
      let report = await runDoctor(config(3), { timeoutMs: 3_000 });
      for (const until = Date.now() + 90_000; report.ok && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 1_000));
        report = await runDoctor(config(3), { timeoutMs: 3_000 });
      }
      expect(report.ok).toBe(false);
      // The node left may still answer the first JetStream request from what it knew (then the
      // stream read fails) or not at all (then opening JetStream fails): either names the quorum.
      const found = natsViolations(report.findings);
      expect(found.length).toBeGreaterThan(0);
      for (const f of found) {
        expect(["nats.servers", "nats.stream"]).toContain(f.key);
        expect(`${f.finding} ${f.fix}`).toMatch(/quorum/);
      }
    } finally {
      await a?.restart();
      await b?.restart();
    }
    await cluster.waitForMetaLeader();
    await cluster.waitForStreamLeader("CL_JOBS", 3);
    expect(natsViolations((await runDoctor(config(3))).findings)).toEqual([]);
  }, 300_000);
});
