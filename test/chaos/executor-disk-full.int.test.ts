import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { enqueueJob } from "@idem/core";
import { createExecutor } from "@idem/executor";
import { openSqliteJournal } from "@idem/journal";
import { agentConsumerName, connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import { parseConfig } from "@idem/schema";
import { startNatsServer } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { skipUnless } from "../support/skip.js";

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

/** Polls `check` until it holds; the bound is far beyond a passing run on a busy machine. */
async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** JetStream's ack wait here: long beside a heartbeat (a third of it) on a busy machine. */
const ACK_WAIT_MS = 3_000;

const MOUNTS = skipUnless(canMount(), "needs root: mounts a small tmpfs");

describe("the executor when the journal's disk fills up", MOUNTS, () => {
  it("keeps the output, acks nothing and never re-runs the agent; records once space returns", async () => {
    await using nats = await startNatsServer();
    const dir = mkdtempSync(join(tmpdir(), "idem-exec-full-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir]);
    try {
      const r = parseConfig(
        {
          journal: { path: "journal.db" },
          agents: { writer: { command: ["unused"], timeoutMs: 120_000 } },
          // No backoff: its first step would be the ack wait.
          queue: { ackWaitMs: ACK_WAIT_MS, maxDeliver: 3, backoffMs: [], maxAckPending: 1 },
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
      const journal = await openSqliteJournal(config.journal.path, { busyTimeoutMs: 50 });
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
        await until("the agent's run", async () => runs > 0);
        expect(runs).toBe(1);
        // Two ack waits: an un-heartbeated delivery would have come back by now.
        await sleep(2 * ACK_WAIT_MS);
        expect(await journal.outputs.has("full-1")).toBe(false);
        const jsm = await jetstreamManager(nc);
        const info = await jsm.consumers.info(natsConfig.stream, agentConsumerName("writer"));
        expect(info.num_ack_pending).toBe(1);
        expect(info.num_redelivered).toBe(0);
        expect(await journal.maintenance.integrity()).toEqual([]);
        unlinkSync(ballast as string); // space returns
        await until("the output", () => journal.outputs.has("full-1"));
        expect(await journal.outputs.has("full-1")).toBe(true);
        await until("the ack", async () => {
          const after = await jsm.consumers.info(natsConfig.stream, agentConsumerName("writer"));
          return after.num_ack_pending === 0;
        });
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
  });
});
