import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { enqueueJob, silentLogger } from "@idem/core";
import { createExecutor } from "@idem/executor";
import { openJournal } from "@idem/journal";
import { agentConsumerName, connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { parseConfig } from "@idem/schema";
import { startNatsServer } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";

function canMount(): boolean {
  const dir = mkdtempSync(join(tmpdir(), "idem-mount-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "pipe" });
    execFileSync("umount", [dir]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Fills the filesystem holding `dir` with one ballast file; returns its path. */
function fill(dir: string): string {
  const ballast = join(dir, "ballast");
  const fd = openSync(ballast, "w");
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOSPC") throw e;
  } finally {
    closeSync(fd);
  }
  return ballast;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!canMount())("the executor when the journal's disk fills up", () => {
  it("keeps the output, acks nothing and never re-runs the agent; records once space returns", async () => {
    await using nats = await startNatsServer();
    const dir = mkdtempSync(join(tmpdir(), "idem-exec-full-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir]);
    try {
      const r = parseConfig(
        {
          journal: { path: "journal.db" },
          agents: { writer: { command: ["unused"], timeoutMs: 5000 } },
          queue: { ackWaitMs: 1000, maxDeliver: 3, backoffMs: [200, 400], maxAckPending: 1 },
          nats: {
            url: nats.url,
            duplicateWindowMs: 60_000,
            maxAgeMs: 3_600_000,
            publishRetryMs: 5000,
          },
        },
        { dir },
      );
      if (!r.ok) throw new Error(JSON.stringify(r.issues));
      const config = r.config;
      const journal = await openJournal(config.journal.path, { busyTimeoutMs: 50 });
      const nc = await connectNats(nats.url, "disk-full-test");
      const natsConfig = config.nats as NonNullable<typeof config.nats>;
      await ensureJobsStream(await jetstreamManager(nc), natsConfig);
      const publisher = createJobPublisher({ js: jetstream(nc), nats: natsConfig });
      let runs = 0;
      let ballast: string | undefined;
      let enqueued: () => void = () => {};
      const wasEnqueued = new Promise<void>((r) => {
        enqueued = r;
      });
      const executor = createExecutor({
        config,
        journal,
        logger: silentLogger(),
        run: async (job) => {
          runs += 1;
          await wasEnqueued;
          ballast = fill(dir); // the disk fills while the agent works: the record cannot be written
          return { jobId: job.jobId, agent: job.agent, summary: "x".repeat(20_000), effects: [] };
        },
      });
      await executor.start();
      try {
        await enqueueJob({ jobId: "full-1", agent: "writer", input: {} }, { journal, publisher });
        enqueued();
        for (let i = 0; i < 100 && runs === 0; i++) await sleep(50);
        expect(runs).toBe(1);
        await sleep(3000); // three ack waits: an un-heartbeated delivery would have come back by now
        expect(await journal.outputs.has("full-1")).toBe(false);
        const jsm = await jetstreamManager(nc);
        const info = await jsm.consumers.info(natsConfig.stream, agentConsumerName("writer"));
        expect(info.num_ack_pending).toBe(1);
        expect(info.num_redelivered).toBe(0);
        expect(await journal.maintenance.integrity()).toEqual([]);
        unlinkSync(ballast as string); // space returns
        for (let i = 0; i < 200 && !(await journal.outputs.has("full-1")); i++) await sleep(50);
        expect(await journal.outputs.has("full-1")).toBe(true);
        for (let i = 0; i < 100; i++) {
          const after = await jsm.consumers.info(natsConfig.stream, agentConsumerName("writer"));
          if (after.num_ack_pending === 0) break;
          await sleep(50);
        }
        const done = await jsm.consumers.info(natsConfig.stream, agentConsumerName("writer"));
        expect(done.num_ack_pending).toBe(0);
        expect(runs).toBe(1);
        expect((await journal.status()).outputs).toBe(1);
      } finally {
        if (ballast) rmSync(ballast, { force: true }); // a stop waits for the record it keeps retrying
        await executor.stop();
        await nc.close();
        await journal.close();
      }
    } finally {
      execFileSync("umount", ["-l", dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
