// A three-node JetStream cluster on loopback (packages/testing startNatsCluster): a stream of three
// replicas keeps every acknowledged publish through the SIGKILL of any one node, and idem's job
// publisher rides through the stream leader's election (4 to 9 s on nats-server 2.9, during which
// publishes fail with "jetstream is not enabled" or time out).
import type { Job, NatsConfig } from "@idem/schema";
import { type NatsClusterHandle, startNatsCluster } from "@idem/testing";
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeNats, connectNats, createJobPublisher } from "../src/index.js";

let cluster: NatsClusterHandle;
let nc: NatsConnection;

const nats: NatsConfig = {
  url: "",
  stream: "R3_JOBS",
  subjectPrefix: "r3",
  duplicateWindowMs: 600_000,
  maxAgeMs: 3_600_000,
  // Long enough to ride out an election on a slow machine: a publish is retried with its msg id.
  publishRetryMs: 120_000,
  servers: [],
  replicas: 3,
};

beforeAll(async () => {
  cluster = await startNatsCluster({ size: 3 });
  nc = await connectNats(cluster.urls.join(","), "cluster-test");
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: nats.stream,
    subjects: [`${nats.subjectPrefix}.jobs.>`],
    num_replicas: 3,
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    duplicate_window: nats.duplicateWindowMs * 1_000_000,
  });
  await cluster.waitForStreamLeader(nats.stream, 3);
}, 180_000);

afterAll(async () => {
  if (nc) await closeNats(nc);
  await cluster?.stop();
});

/** Every Nats-Msg-Id the stream holds, read back message by message. */
async function storedIds(): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(nats.stream);
  const ids: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(nats.stream, { seq });
    const id = m?.header.get("Nats-Msg-Id");
    if (id) ids.push(id);
  }
  return ids;
}

describe("a JetStream cluster of three", () => {
  it("keeps every acknowledged publish of an R3 stream through the SIGKILL of each node in turn", async () => {
    const publisher = createJobPublisher({ js: jetstream(nc), nats, attemptTimeoutMs: 2_000 });
    const acked: string[] = [];
    let n = 0;
    const publishSome = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const job: Job = { jobId: `job-${++n}`, agent: "writer", input: { n } };
        const r = await publisher.publish(job);
        expect(r.duplicate).toBe(false);
        acked.push(job.jobId);
      }
    };
    for (const victim of cluster.nodes) {
      await publishSome(5);
      // The kill lands while publishes are in flight: those acked before it must survive it, those
      // in flight are retried by msg id until the new leader answers.
      const during = publishSome(10);
      await victim.kill("SIGKILL");
      await during;
      await victim.restart();
      await cluster.waitForMetaLeader();
      await cluster.waitForStreamLeader(nats.stream, 3);
    }
    const stored = await storedIds();
    expect(new Set(stored).size).toBe(stored.length);
    expect(stored.sort()).toEqual([...acked].sort());
  }, 600_000);
});
