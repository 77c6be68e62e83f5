import { fdatasync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { enqueueJob, retryDeadLetter, submitOutput } from "@idem/core";
import { openSqliteJournal, type SqliteJournalOptions } from "@idem/journal";
import {
  agentConsumerName,
  connectNats,
  createJobPublisher,
  ensureJobsStream,
  type JobPublisher,
} from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import { type Config, isIdemError, type Job } from "@idem/schema";
import {
  type NatsServerHandle,
  startNatsServer,
  type TempJournal,
  tempJournal,
} from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipUnless } from "../../../test/support/skip.js";
import {
  createExecutor,
  createExecutorMetrics,
  type Executor,
  startApiServer,
} from "../src/index.js";
import { countFile, runCounts, testConfig, waitFor } from "./helpers.js";

let server: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, "executor-test");
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

interface Env extends AsyncDisposable {
  config: Config;
  tj: TempJournal;
  counts: string;
  publisher: JobPublisher | undefined;
  executors: Executor[];
  startExecutor(): Promise<Executor>;
  enqueue(job: Job): ReturnType<typeof enqueueJob>;
}

async function setup(
  transport: "embedded" | "jetstream",
  over: {
    queue?: Partial<Config["queue"]>;
    timeoutMs?: number;
    busyTimeoutMs?: number;
    fdatasync?: SqliteJournalOptions["fdatasync"];
  } = {},
): Promise<Env> {
  const tj = await tempJournal({
    ...(over.busyTimeoutMs ? { busyTimeoutMs: over.busyTimeoutMs } : {}),
    ...(over.fdatasync ? { fdatasync: over.fdatasync } : {}),
  });
  const config = testConfig({
    dir: tj.dir,
    journalPath: tj.path,
    ...(transport === "jetstream" ? { natsUrl: server.url } : {}),
    ...(over.queue ? { queue: over.queue } : {}),
    ...(over.timeoutMs ? { timeoutMs: over.timeoutMs } : {}),
  });
  let publisher: JobPublisher | undefined;
  if (config.nats) {
    await ensureJobsStream(await jetstreamManager(nc), config.nats);
    publisher = createJobPublisher({ js: jetstream(nc), nats: config.nats });
  }
  const executors: Executor[] = [];
  return {
    config,
    tj,
    counts: countFile(tj.dir),
    publisher,
    executors,
    async startExecutor() {
      const ex = createExecutor({
        config,
        journal: tj.journal,
        logger: silentLogger(),
        pollMs: 20,
      });
      executors.push(ex);
      await ex.start();
      return ex;
    },
    enqueue: (job) => enqueueJob(job, { journal: tj.journal, ...(publisher ? { publisher } : {}) }),
    async [Symbol.asyncDispose]() {
      await Promise.all(executors.map((e) => e.stop()));
      await tj.dispose();
    },
  };
}

const job = (env: Env, jobId: string, input: Record<string, unknown> = {}): Job => ({
  jobId,
  agent: "writer",
  input: { countFile: env.counts, ...input },
});

describe.each(["embedded", "jetstream"] as const)("executor on the %s queue", (transport) => {
  it("runs the agent once and records its output; the same job enqueued twice is stored once", async () => {
    await using env = await setup(transport);
    const first = await env.enqueue(job(env, "j-1"));
    const second = await env.enqueue(job(env, "j-1"));
    expect(first.duplicate).toBe(false);
    expect(second.duplicate).toBe(true);
    expect(second.seq).toBe(first.seq);
    expect(first.stream).toBe(transport === "embedded" ? "embedded" : env.config.nats?.stream);
    await env.startExecutor();
    const rec = await waitFor("the output", () => env.tj.journal.outputs.get("j-1"));
    expect(rec.output.summary).toBe("did j-1");
    expect(rec.source).toBe("executor");
    // The executor records the canonical JSON: the same output submitted with its keys in another
    // order is a duplicate, not a conflict.
    const again = { summary: rec.output.summary, effects: [], agent: "writer", jobId: "j-1" };
    expect(
      (
        await submitOutput({
          journal: env.tj.journal,
          config: env.config,
          raw: again,
          source: "http",
        })
      ).status,
    ).toBe("duplicate");
    await new Promise((r) => setTimeout(r, 300));
    expect(await runCounts(env.counts)).toEqual({ "j-1": 1 });
    const events = await env.tj.journal.events.count(["job.enqueued", "job.duplicate"]);
    expect(events).toEqual({ "job.enqueued": 1, "job.duplicate": 1 });
  });

  it("refuses the same job ID with another input", async () => {
    await using env = await setup(transport);
    await env.enqueue(job(env, "j-2", { a: 1 }));
    const err = await env.enqueue(job(env, "j-2", { a: 2 })).catch((e) => e);
    expect(isIdemError(err, "JOB_CONFLICT")).toBe(true);
  });

  it("runs the agent once with two executors and a republished job", async () => {
    // On JetStream the republished message is held off by the first one's claim (the agent timeout)
    // or delivery (3 heartbeats, a third of the ack wait each): short, far above an agent run.
    await using env = await setup(transport, {
      timeoutMs: 10_000,
      queue: { ackWaitMs: 10_000, maxDeliver: 10 },
    });
    await env.startExecutor();
    await env.startExecutor();
    const j = job(env, "j-3", { sleepMs: 300 });
    await env.enqueue(j);
    if (env.publisher) await env.publisher.publish(j, { msgId: "j-3-republished" });
    else await env.enqueue(j);
    await waitFor("the output", () => env.tj.journal.outputs.has("j-3"));
    if (env.publisher) {
      await waitFor("the skipped redelivery", async () => {
        const c = await env.tj.journal.events.count(["redelivery.skipped"]);
        return (c["redelivery.skipped"] ?? 0) >= 1;
      });
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await runCounts(env.counts)).toEqual({ "j-3": 1 });
    expect((await env.tj.journal.outputs.list()).length).toBe(1);
  });

  it(
    "gives a job another client published an outbox row with its stream sequence, in the claim",
    skipUnless(transport === "jetstream", "JetStream only: a stream sequence"),
    async () => {
      await using env = await setup(transport);
      await env.startExecutor();
      const j = job(env, "j-foreign");
      const pub = await env.publisher?.publish(j); // no idem enqueue: no outbox row before the claim
      await waitFor("the output", () => env.tj.journal.outputs.has("j-foreign"));
      expect(await env.tj.journal.jobs.get("j-foreign")).toMatchObject({
        state: "done",
        streamSeq: pub?.seq,
        input: j.input,
      });
    },
  );

  it("dead-letters an always-failing job after maxDeliver deliveries spaced by the backoff; dlq retry runs it again", async () => {
    // On JetStream the backoff's first step is also the ack wait of a delivery in progress: an agent
    // run must not outlast it between two heartbeats (a third of it), however busy the machine.
    const [first, second] = [3_000, 4_000];
    await using env = await setup(transport, { queue: { backoffMs: [first, second] } });
    await env.startExecutor();
    await env.enqueue(job(env, "j-4", { failTimes: 3 }));
    const [dl] = await waitFor("the dead letter", async () => {
      const d = await env.tj.journal.deadLetters.list();
      return d.length > 0 ? d : undefined;
    });
    expect(dl?.jobId).toBe("j-4");
    expect(dl?.class).toBe("transient");
    expect(dl?.deliveries).toBe(3);
    expect(dl?.lastError).toMatch(/exited with code 1/);
    const failed = await env.tj.journal.events.list({ jobId: "j-4", type: "job.failed" });
    const dead = await env.tj.journal.events.list({ jobId: "j-4", type: "job.dead" });
    expect(failed.length).toBe(2);
    const times = [...failed, ...dead].map((e) => e.at);
    expect((times[1] as number) - (times[0] as number)).toBeGreaterThanOrEqual(first - 20);
    expect((times[2] as number) - (times[1] as number)).toBeGreaterThanOrEqual(second - 20);
    expect(await runCounts(env.counts)).toEqual({ "j-4": 3 });
    // Retried at once: the terminated delivery's advisory may come after the retry, and is then
    // ignored (jetstream-late-advisory.int.test.ts pins that order).
    const retry = await retryDeadLetter("j-4", {
      journal: env.tj.journal,
      ...(env.publisher ? { publisher: env.publisher } : {}),
    });
    expect(retry.retry).toBe(1);
    await waitFor("the output after retry", () => env.tj.journal.outputs.has("j-4"));
    expect(await runCounts(env.counts)).toEqual({ "j-4": 4 });
    expect(await env.tj.journal.deadLetters.list({ unresolved: true })).toEqual([]);
  });

  it("keeps the output and does not ack while the journal cannot be written; records it once it can", async () => {
    // Heartbeats keep the delivery past its ack wait (embedded: lease); the test waits out two.
    const ackWaitMs = 3_000;
    await using env = await setup(transport, { busyTimeoutMs: 20, queue: { ackWaitMs } });
    const ex = await env.startExecutor();
    const gate = join(env.tj.dir, "j-5.go");
    await env.enqueue(job(env, "j-5", { waitForFile: gate }));
    await waitFor("the agent to start", async () => (await runCounts(env.counts))["j-5"] === 1);
    const locker = new Database(env.tj.path);
    locker.exec("BEGIN EXCLUSIVE");
    try {
      writeFileSync(gate, ""); // the agent finishes only once the journal is locked
      await waitFor("a refused record", async () => {
        const m = await ex.metrics.recordRetries.get();
        return (m.values[0]?.value ?? 0) > 0;
      });
      await new Promise((r) => setTimeout(r, 2 * ackWaitMs));
      expect(await env.tj.journal.outputs.has("j-5")).toBe(false);
      if (env.config.nats) {
        const jsm = await jetstreamManager(nc);
        const info = await jsm.consumers.info(env.config.nats.stream, agentConsumerName("writer"));
        expect(info.num_ack_pending).toBe(1);
        expect(info.num_redelivered).toBe(0);
      }
    } finally {
      locker.exec("COMMIT");
      locker.close();
    }
    await waitFor("the output", () => env.tj.journal.outputs.has("j-5"));
    await new Promise((r) => setTimeout(r, 300));
    expect(await runCounts(env.counts)).toEqual({ "j-5": 1 });
    expect(ex.inFlight()).toBe(0);
  });

  it("stops taking deliveries, acks nothing and says so (fatal, /healthz 503) when the journal's fsync fails", async () => {
    // An fsync that fails with EIO cannot be caused on this machine's disk: the journal's own
    // injection point stands in for it, from the moment the agent of j-f is running.
    let failing = false;
    const eio = Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
    // The restarted executor waits out the claims (the agent timeout on JetStream, the ack wait
    // embedded) and the ack wait: short, yet far above the steps from j-long's start to the failure.
    await using env = await setup(transport, {
      timeoutMs: 20_000,
      queue: { ackWaitMs: 5_000 },
      fdatasync: (fd, done) => (failing ? setImmediate(() => done(eio)) : fdatasync(fd, done)),
    });
    const ex = await env.startExecutor();
    const api = await startApiServer({
      config: env.config,
      journal: env.tj.journal,
      metrics: createExecutorMetrics(),
      logger: silentLogger(),
      port: 0,
    });
    try {
      await env.enqueue(job(env, "j-ok"));
      await waitFor("the first output", () => env.tj.journal.outputs.has("j-ok"));
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);

      // A long agent is running beside j-f when the journal fails: it is stopped, not waited for.
      const pidFile = join(env.tj.dir, "long.pid");
      await env.enqueue(job(env, "j-long", { sleepFirstMs: 60_000, pidFile }));
      await waitFor("the long agent", async () => (await runCounts(env.counts))["j-long"] === 1);
      const gate = join(env.tj.dir, "j-f.go");
      await env.enqueue(job(env, "j-f", { waitForFile: gate }));
      await waitFor("the agent of j-f", async () => (await runCounts(env.counts))["j-f"] === 1);
      failing = true;
      writeFileSync(gate, ""); // j-f's output is recorded only once fsync fails
      const failure = await Promise.race([
        ex.fatal,
        new Promise<undefined>((r) => setTimeout(r, 60_000, undefined)),
      ]);
      expect(failure).toMatchObject({ code: "IO", message: expect.stringMatching(/EIO/) });
      await waitFor("the deliveries to be let go", () => ex.inFlight() === 0);
      const longPid = Number(readFileSync(pidFile, "utf8").trim());
      await waitFor("the long agent to be killed", () => {
        try {
          process.kill(longPid, 0);
          return false;
        } catch (e) {
          return (e as NodeJS.ErrnoException).code === "ESRCH";
        }
      });
      const health = await fetch(`${api.url}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ ok: false, error: failure?.message });

      // A job enqueued by a healthy process is not taken by the failed executor.
      const other = await openSqliteJournal(env.tj.path);
      try {
        const next = job(env, "j-after");
        await enqueueJob(next, {
          journal: other,
          ...(env.publisher ? { publisher: env.publisher } : {}),
        });
        if (env.config.nats) {
          // j-f's delivery was neither acked nor given back: it waits out its ack wait.
          const jsm = await jetstreamManager(nc);
          const info = await jsm.consumers.info(
            env.config.nats.stream,
            agentConsumerName("writer"),
          );
          expect(info.num_ack_pending + info.num_redelivered).toBeGreaterThanOrEqual(1);
        }
        await new Promise((r) => setTimeout(r, 600));
        expect((await runCounts(env.counts))["j-after"]).toBeUndefined();

        // The restarted process (a new journal handle) does what is left, once.
        const healthy = createExecutor({
          config: env.config,
          journal: other,
          logger: silentLogger(),
          pollMs: 20,
        });
        env.executors.push(healthy);
        await healthy.start();
        await waitFor("j-after's output", () => other.outputs.has("j-after"));
        await waitFor("j-f's output", () => other.outputs.has("j-f"));
        await waitFor("j-long's output", () => other.outputs.has("j-long"));
        // The record of j-f reached the WAL before its fsync failed: it is not run again.
        await new Promise((r) => setTimeout(r, 300));
        expect(await runCounts(env.counts)).toEqual({
          "j-ok": 1,
          "j-f": 1,
          "j-after": 1,
          "j-long": 2,
        });
        await healthy.stop();
      } finally {
        await other.close();
      }
    } finally {
      await api.close();
    }
  });
});

describe("many runs in flight", () => {
  it("run beside each other without a listener-leak warning (one fatal-abort listener per run)", async () => {
    await using env = await setup("embedded", { queue: { maxAckPending: 16 } });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      // Every run waits until all 16 are in flight together, however long the claims take.
      let running = 0;
      let most = 0;
      let allRunning = () => {};
      const together = new Promise<void>((r) => {
        allRunning = r;
      });
      const ex = createExecutor({
        config: env.config,
        journal: env.tj.journal,
        logger: silentLogger(),
        pollMs: 5,
        run: async () => {
          most = Math.max(most, ++running);
          if (running === 16) allRunning();
          await together;
          running -= 1;
          return { summary: "ok", effects: [] };
        },
      });
      env.executors.push(ex);
      for (let i = 0; i < 16; i++) await env.enqueue(job(env, `many-${i}`));
      await ex.start();
      await waitFor("16 outputs", async () => (await env.tj.journal.status()).outputs === 16);
      expect(most).toBe(16);
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});

describe("the NATS submit subject", () => {
  it("answers request/reply with the submit JSON shape", async () => {
    await using env = await setup("jetstream");
    await env.startExecutor();
    const subject = `${env.config.nats?.subjectPrefix}.submit`;
    const ask = async (body: unknown) =>
      (await nc.request(subject, JSON.stringify(body), { timeout: 60_000 })).json<{
        status: string;
        jobId: string | null;
      }>();
    const out = { jobId: "n-1", agent: "writer", effects: [] };
    expect(await ask(out)).toEqual({ status: "recorded", jobId: "n-1" });
    expect((await ask(out)).status).toBe("duplicate");
    expect((await ask({ ...out, summary: "x" })).status).toBe("conflict");
    expect((await ask({ jobId: "n-2" })).status).toBe("invalid");
  });
});
