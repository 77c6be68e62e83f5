// Stopping is honest (issue 36): an executor stopped while an agent runs waits for it up to its
// grace, then kills the agent's process group and gives the job back, so the next executor runs it
// at once, on both transports, without the abandoned run counting against the job on the
// embedded queue.
import { readFile } from "node:fs/promises";
import { connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import { type NatsServerHandle, startNatsServer, tempJournal } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExecutor } from "../src/index.js";
import { countFile, runCounts, testConfig, waitFor } from "./helpers.js";

let server: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, "stop-grace-test");
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.each(["embedded", "jetstream"] as const)(
  "an executor stopped on the %s queue",
  (transport) => {
    it("abandons an agent still running at the end of its grace: its process killed, the job given back and run by the next executor", async () => {
      await using tj = await tempJournal();
      const config = testConfig({
        dir: tj.dir,
        journalPath: tj.path,
        ...(transport === "jetstream" ? { natsUrl: server.url } : {}),
      });
      const counts = countFile(tj.dir);
      const pidFile = `${tj.dir}/agent.pids`;
      const job = {
        jobId: "grace-1",
        agent: "writer",
        input: { countFile: counts, sleepFirstMs: 600_000, pidFile },
      };
      await tj.journal.jobs.enqueue(job);
      if (config.nats) {
        await ensureJobsStream(await jetstreamManager(nc), config.nats);
        await createJobPublisher({ js: jetstream(nc), nats: config.nats }).publish(job);
      }
      const first = createExecutor({
        config,
        journal: tj.journal,
        logger: silentLogger(),
        pollMs: 20,
      });
      await first.start();
      const pid = await waitFor("the agent running", async () => {
        const text = await readFile(pidFile, "utf8").catch(() => "");
        return text.trim() === "" ? undefined : Number(text.trim().split("\n")[0]);
      });
      await first.stop({ graceMs: 200 });
      // SIGKILLed with its group; reaped by this process a moment later.
      await waitFor("the agent gone", () => !alive(pid));
      const row = await tj.journal.jobs.get("grace-1");
      expect(row?.state).toBe("queued");
      if (transport === "embedded") expect(row?.deliveries).toBe(0);
      expect(await tj.journal.events.list({ jobId: "grace-1", type: "job.released" })).toHaveLength(
        1,
      );

      const second = createExecutor({
        config,
        journal: tj.journal,
        logger: silentLogger(),
        pollMs: 20,
      });
      await second.start();
      try {
        await waitFor("the output", () => tj.journal.outputs.has("grace-1"));
      } finally {
        await second.stop();
      }
      expect(await runCounts(counts)).toEqual({ "grace-1": 2 });
      expect(await tj.journal.deadLetters.list()).toEqual([]);
    });
  },
);
