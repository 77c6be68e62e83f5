// Issue 42, item 9: enqueueing rides out a JetStream cluster's leader election. The JetStream meta
// leader of a three-node cluster is SIGKILLed and, at once, every surface that enqueues through
// `withJobPublisher` runs: the drills' enqueue (in process), `idem enqueue` and `idem dlq retry`
// (the built CLI). Each must succeed within `nats.publishRetryMs`: the account-info request and
// the stream's info are retried while the cluster elects (4 to 9 s on nats-server 2.9), as each
// publish is.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { enqueueJob } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { closeNats, connectNats, ensureJobsStream, withJobPublisher } from "@idem/nats";
import { type Config, parseConfig } from "@idem/schema";
import { type NatsClusterHandle, startNatsCluster, tempDir } from "@idem/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildForTest, IDEM_BIN } from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);

let cluster: NatsClusterHandle;
beforeAll(async () => {
  buildForTest("apps/cli");
  cluster = await startNatsCluster({ size: 3 });
  await cluster.waitForMetaLeader();
}, 180_000);
afterAll(async () => {
  await cluster?.stop();
});

describe("enqueueing during a JetStream leader election", () => {
  it("succeeds on every surface when the meta leader is SIGKILLed just before", async () => {
    await using dir = await tempDir("idem-election-");
    const raw = {
      journal: { path: "journal.db" },
      agents: { writer: { command: ["true"] } },
      nats: {
        servers: cluster.urls,
        stream: "ELECTION_JOBS",
        subjectPrefix: "election",
        replicas: 3,
        duplicateWindowMs: 600_000,
        maxAgeMs: 3_600_000,
        // The stated deadline: an election on a slow machine fits well inside it.
        publishRetryMs: 120_000,
      },
    };
    const file = join(dir.path, "idem.config.json");
    writeFileSync(file, JSON.stringify(raw));
    const parsed = parseConfig(raw, { dir: dir.path });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const config: Config = parsed.config;
    const nats = config.nats as NonNullable<Config["nats"]>;
    // The stream exists with its three replicas, and a dead letter waits for `idem dlq retry`.
    const setup = await connectNats(cluster.urls.join(","), "election-setup");
    await ensureJobsStream(await jetstreamManager(setup), nats);
    await closeNats(setup);
    await cluster.waitForStreamLeader(nats.stream, 3);
    const journal = await openSqliteJournal(config.journal.path);
    await journal.jobs.enqueue({ jobId: "dead-1", agent: "writer", input: {} });
    await journal.deadLetters.add("dead-1", {
      class: "transient",
      error: "test",
      deliveries: 3,
      agent: "writer",
    });
    const jobFile = join(dir.path, "job.json");
    writeFileSync(jobFile, JSON.stringify({ jobId: "cli-1", agent: "writer", input: {} }));
    try {
      const leader = await cluster.waitForMetaLeader();
      const victim = cluster.nodes.find((n) => n.name === leader);
      if (!victim) throw new Error(`no node named ${leader}`);
      await victim.kill("SIGKILL");

      const cli = (args: string[]) =>
        run(process.execPath, [IDEM_BIN, ...args, "--json", "--config", file], {
          env: { ...process.env, NATS_URL: "", IDEM_CONFIG: "" },
        });
      const [inProcess, enqueued, retried] = await Promise.all([
        withJobPublisher(config, "election-test", (publisher) =>
          enqueueJob({ jobId: "drill-1", agent: "writer", input: {} }, { journal, publisher }),
        ),
        cli(["enqueue", jobFile]),
        cli(["dlq", "retry", "dead-1"]),
      ]);
      expect(inProcess).toMatchObject({ jobId: "drill-1", stream: nats.stream, duplicate: false });
      expect(JSON.parse(enqueued.stdout)).toMatchObject({ jobId: "cli-1", stream: nats.stream });
      expect(JSON.parse(retried.stdout)).toMatchObject({ jobId: "dead-1", retry: 1 });

      await victim.restart();
      await cluster.waitForMetaLeader();
      await cluster.waitForStreamLeader(nats.stream, 3);
      const check = await connectNats(cluster.urls.join(","), "election-check");
      try {
        // Each stored once, under its msg id: a retried setup or publish stored nothing twice.
        const jsm = await jetstreamManager(check);
        const ids: string[] = [];
        for (let seq = 1; seq <= 3; seq++) {
          const m = await jsm.streams.getMessage(nats.stream, { seq });
          ids.push(m?.header.get("Nats-Msg-Id") ?? "");
        }
        expect(ids.sort()).toEqual(["cli-1", "dead-1#retry-1", "drill-1"]);
        expect((await jsm.streams.info(nats.stream)).state.messages).toBe(3);
      } finally {
        await closeNats(check);
      }
    } finally {
      await journal.close();
    }
  }, 600_000);
});
