import { readFileSync } from "node:fs";
import { listDeadLetters } from "@idem/core";
import { connectNats, createJobPublisher, ensureJobsStream, type JobPublisher } from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import type { Config, Job } from "@idem/schema";
import { type NatsServerHandle, startNatsServer, tempJournal } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExecutor, type Executor } from "../src/index.js";
import { countFile, runCounts, testConfig, waitFor } from "./helpers.js";

let server: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, "first-hour-test");
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

type Transport = "embedded" | "jetstream";

async function setup(transport: Transport) {
  const tj = await tempJournal();
  const config: Config = testConfig({
    dir: tj.dir,
    journalPath: tj.path,
    ...(transport === "jetstream" ? { natsUrl: server.url } : {}),
    extra: { repos: { site: { path: "site" } } },
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
    executors,
    counts: countFile(tj.dir),
    async start(over: Partial<Parameters<typeof createExecutor>[0]> = {}) {
      const ex = createExecutor({
        config,
        journal: tj.journal,
        logger: silentLogger(),
        pollMs: 20,
        unknownAgentSweepMs: 50,
        ...over,
      });
      executors.push(ex);
      await ex.start();
      return ex;
    },
    /** Enqueues as `idem enqueue` without an agent check does: the outbox row, then the stream. */
    async enqueue(job: Job) {
      await tj.journal.jobs.enqueue(job);
      if (publisher) await publisher.publish(job);
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(executors.map((e) => e.stop()));
      await tj.dispose();
    },
  };
}

const deadLetter = async (env: Awaited<ReturnType<typeof setup>>, jobId: string) =>
  waitFor(`the dead letter of ${jobId}`, async () =>
    (await env.tj.journal.deadLetters.list()).find((d) => d.jobId === jobId),
  );

describe.each(["embedded", "jetstream"] as const)("unknown agents on the %s queue", (transport) => {
  it("dead-letters a job for an agent no executor runs at once, with class unknown-agent, and dlq ls lists it", async () => {
    await using env = await setup(transport);
    await env.start();
    await env.enqueue({ jobId: "ghost-1", agent: "ghost", input: {} });
    await env.enqueue({ jobId: "w-1", agent: "writer", input: { countFile: env.counts } });
    const dl = await deadLetter(env, "ghost-1");
    expect(dl.class).toBe("unknown-agent");
    expect(dl.deliveries).toBe(0);
    expect(dl.lastError).toMatch(/agents\.ghost/);
    // The running executor never reads its config again: the advice names it, to restart.
    const executor = env.executors[0];
    expect(dl.lastError).toContain(`executor ${executor?.owner}`);
    expect(dl.lastError).toMatch(/restart that executor .*then idem dlq retry ghost-1/);
    const listing = await listDeadLetters(env.tj.journal);
    expect(listing.jobs.map((j) => j.jobId)).toEqual(["ghost-1"]);
    await waitFor("the writer's output", () => env.tj.journal.outputs.has("w-1"));
    expect(await runCounts(env.counts)).toEqual({ "w-1": 1 });
  });

  it("leaves a job for an agent that another executor of this journal runs to that executor", async () => {
    await using env = await setup(transport);
    const run = async (job: Job) => ({ summary: `other did ${job.jobId}`, effects: [] });
    // The executor that knows "other" has run here before (it announced its agents), then stopped.
    const other = await env.start({ agents: ["other"], run });
    await other.stop();
    await env.enqueue({ jobId: "o-1", agent: "other", input: {} });
    await env.start();
    // A ghost job enqueued after it is dead-lettered: the sweeps have seen o-1 by then.
    await env.enqueue({ jobId: "ghost-2", agent: "ghost", input: {} });
    await deadLetter(env, "ghost-2");
    expect((await env.tj.journal.deadLetters.list()).map((d) => d.jobId)).toEqual(["ghost-2"]);
    expect((await env.tj.journal.jobs.get("o-1"))?.state).toBe("queued");
    await env.start({ agents: ["other"], run });
    await waitFor("the other agent's output", () => env.tj.journal.outputs.has("o-1"));
  });
});

describe("unknown agents on JetStream with executors on other journals", () => {
  it("leaves a job to the agent's consumer that an executor with another journal created", async () => {
    await using env = await setup("jetstream");
    await using elsewhere = await tempJournal();
    const run = async (job: Job) => ({ summary: `other did ${job.jobId}`, effects: [] });
    const other = createExecutor({
      config: env.config,
      journal: elsewhere.journal,
      logger: silentLogger(),
      agents: ["other"],
      run,
    });
    await other.start();
    try {
      await env.start();
      await env.enqueue({ jobId: "o-2", agent: "other", input: {} });
      await env.enqueue({ jobId: "ghost-3", agent: "ghost", input: {} });
      await deadLetter(env, "ghost-3");
      expect((await env.tj.journal.deadLetters.list()).map((d) => d.jobId)).toEqual(["ghost-3"]);
      await waitFor("the other executor's output", () => elsewhere.journal.outputs.has("o-2"));
    } finally {
      await other.stop();
    }
  });
});

describe.each(["embedded", "jetstream"] as const)(
  "invalid agent output on the %s queue",
  (transport) => {
    it("runs the agent queue.maxDeliver times, as docs/concepts.md and docs/runbook.md say, then dead-letters it as validation with nothing recorded", async () => {
      await using env = await setup(transport);
      await env.start();
      const bad = {
        summary: "escapes",
        effects: [
          {
            kind: "git.patch",
            repo: "site",
            message: "m",
            patch: "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
          },
        ],
      };
      await env.enqueue({
        jobId: "bad-1",
        agent: "writer",
        input: { countFile: env.counts, output: bad },
      });
      const dl = await deadLetter(env, "bad-1");
      expect(dl.class).toBe("validation");
      expect(dl.lastError).toMatch(/effects\.0\.patch/);
      expect(await runCounts(env.counts)).toEqual({ "bad-1": env.config.queue.maxDeliver });
      expect(await env.tj.journal.outputs.has("bad-1")).toBe(false);
      expect((await env.tj.journal.status()).outputs).toBe(0);
      const docs = (f: string) =>
        readFileSync(new URL(`../../../docs/${f}`, import.meta.url), "utf8").replace(/\s+/g, " ");
      for (const f of ["concepts.md", "runbook.md"]) {
        expect(docs(f)).toContain(
          "invalid output is retried after the next `queue.backoffMs` delay and dead-lettered after `queue.maxDeliver` runs",
        );
      }
    });
  },
);
