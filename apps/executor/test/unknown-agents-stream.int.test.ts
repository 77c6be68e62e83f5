import { listDeadLetters } from "@idem/core";
import { JOURNAL_EVENTS } from "@idem/journal";
import { connectNats, ensureJobsStream, jobSubject, openUnconsumedJobs } from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import { type Config, type Job, systemClock } from "@idem/schema";
import { type NatsServerHandle, startNatsServer, tempJournal } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExecutor, type Executor } from "../src/index.js";
import type { TransportContext } from "../src/transport.js";
import { createUnknownAgentSweep } from "../src/unknown-agents.js";
import { countFile, runCounts, testConfig, waitFor } from "./helpers.js";

// Jobs that another NATS client publishes straight to <prefix>.jobs.<agent> (docs/agents.md,
// "Job in, output out"): no journal row, no `idem enqueue`, only the stream message with its Nats-Msg-Id.

let server: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, "unknown-agents-stream-test");
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

async function setup() {
  const tj = await tempJournal();
  const config: Config = testConfig({ dir: tj.dir, journalPath: tj.path, natsUrl: server.url });
  const nats = config.nats as NonNullable<Config["nats"]>;
  const jsm = await jetstreamManager(nc);
  await ensureJobsStream(jsm, nats);
  const js = jetstream(nc);
  const executors: Executor[] = [];
  const disposers: (() => Promise<void>)[] = [];
  return {
    config,
    nats,
    tj,
    counts: countFile(tj.dir),
    /** Publishes as a plain NATS client would: the job as JSON, its ID as Nats-Msg-Id. */
    async publish(job: Job) {
      return await js.publish(jobSubject(nats.subjectPrefix, job.agent), JSON.stringify(job), {
        msgID: job.jobId,
      });
    },
    /** Messages the jobs stream holds under the agent's subject. */
    async held(agent: string) {
      const subject = jobSubject(nats.subjectPrefix, agent);
      const info = await jsm.streams.info(nats.stream, { subjects_filter: subject });
      return info.state.subjects?.[subject] ?? 0;
    },
    async start(over: Partial<Parameters<typeof createExecutor>[0]> = {}) {
      const ex = createExecutor({
        config,
        journal: tj.journal,
        logger: silentLogger(),
        unknownAgentSweepMs: 50,
        ...over,
      });
      executors.push(ex);
      await ex.start();
      return ex;
    },
    defer(dispose: () => Promise<void>) {
      disposers.push(dispose);
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(executors.map((e) => e.stop()));
      for (const d of disposers) await d();
      await tj.dispose();
    },
  };
}

type Env = Awaited<ReturnType<typeof setup>>;

const deadLetter = async (env: Env, jobId: string) =>
  waitFor(`the dead letter of ${jobId}`, async () =>
    (await env.tj.journal.deadLetters.list()).find((d) => d.jobId === jobId),
  );

const deadEvents = async (env: Env, jobId: string) =>
  (await env.tj.journal.events.list({ jobId, type: JOURNAL_EVENTS.JOB_DEAD })).length;

/** The sweep alone, as the executor wires it, with a context that only sweeps. */
function sweeper(env: Env, owner: string) {
  let dead = 0;
  const context = {
    config: env.config,
    journal: env.tj.journal,
    log: silentLogger(),
    clock: systemClock,
    owner,
    agents: Object.keys(env.config.agents),
    stopSignal: new AbortController().signal,
    timeoutOf: () => 2_000,
    deliver: async () => {},
    inFlight: () => 0,
    anySettled: async () => {},
    isWorking: () => false,
    deadLettered: async () => {
      dead += 1;
    },
    journalFailed: () => false,
  } satisfies TransportContext;
  const sweep = createUnknownAgentSweep(context, {
    known: new Set(Object.keys(env.config.agents)),
    stream: openUnconsumedJobs(nc, env.nats),
  });
  return { sweep: () => sweep.sweep(), dead: () => dead };
}

describe("jobs another NATS client publishes for an agent no executor runs", () => {
  it("are dead-lettered by the sweep with class unknown-agent, their row created, and purged from the stream, so a second sweep finds nothing", async () => {
    await using env = await setup();
    await env.publish({ jobId: "wire-ghost-1", agent: "ghost", input: { n: 1 } });
    const { sweep, dead } = sweeper(env, "sweeper-a");
    expect(await sweep()).toBe(1);
    expect(await sweep()).toBe(0);
    expect(dead()).toBe(1);
    const dl = (await env.tj.journal.deadLetters.list()).filter((d) => d.jobId === "wire-ghost-1");
    expect(dl).toHaveLength(1);
    expect(dl[0]?.class).toBe("unknown-agent");
    expect(dl[0]?.deliveries).toBe(0);
    expect(dl[0]?.lastError).toMatch(/agents\.ghost/);
    const row = await env.tj.journal.jobs.get("wire-ghost-1");
    expect(row?.state).toBe("dead");
    expect(row?.input).toEqual({ n: 1 });
    expect((await listDeadLetters(env.tj.journal)).jobs.map((j) => j.jobId)).toEqual([
      "wire-ghost-1",
    ]);
    expect(await env.held("ghost")).toBe(0);
    expect(await deadEvents(env, "wire-ghost-1")).toBe(1);
  });

  it("keeps a message published after the sweep's purge, and dead-letters it on the next sweep", async () => {
    await using env = await setup();
    await env.publish({ jobId: "wire-ghost-2", agent: "ghost", input: {} });
    const { sweep } = sweeper(env, "sweeper-b");
    expect(await sweep()).toBe(1);
    await env.publish({ jobId: "wire-ghost-3", agent: "ghost", input: {} });
    expect(await env.held("ghost")).toBe(1);
    expect(await sweep()).toBe(1);
    expect((await env.tj.journal.deadLetters.list()).map((d) => d.jobId)).toEqual([
      "wire-ghost-2",
      "wire-ghost-3",
    ]);
    expect(await env.held("ghost")).toBe(0);
  });

  it("never purges a message published while the stream is being swept", async () => {
    await using env = await setup();
    await env.publish({ jobId: "wire-ghost-11", agent: "ghost", input: {} });
    const seen: string[] = [];
    const settled = await openUnconsumedJobs(nc, env.nats).sweep({
      skip: (agent) => agent === "writer",
      handle: async (m) => {
        seen.push(m.job?.jobId ?? "?");
        // Published after the sweep read the subjects, before it purges.
        await env.publish({ jobId: "wire-ghost-12", agent: "ghost", input: {} });
        return true;
      },
    });
    expect(settled).toBe(1);
    expect(seen).toEqual(["wire-ghost-11"]);
    expect(await env.held("ghost")).toBe(1);
    const { sweep } = sweeper(env, "sweeper-d");
    expect(await sweep()).toBe(1);
    expect((await env.tj.journal.deadLetters.list()).map((d) => d.jobId)).toEqual([
      "wire-ghost-12",
    ]);
    expect(await env.held("ghost")).toBe(0);
  });

  it("keeps a message whose job another sweep holds, then purges it without a second dead letter once that sweep has dead-lettered it", async () => {
    await using env = await setup();
    const job: Job = { jobId: "wire-ghost-10", agent: "ghost", input: {} };
    const ack = await env.publish(job);
    // Another executor's sweep has claimed it and not yet dead-lettered it.
    const held = await env.tj.journal.jobs.claim(job, {
      owner: "other-sweeper",
      leaseMs: 600_000,
      streamSeq: ack.seq,
    });
    if (held.status !== "acquired") throw new Error(`claim: ${held.status}`);
    const { sweep } = sweeper(env, "sweeper-c");
    expect(await sweep()).toBe(0);
    expect(await env.held("ghost")).toBe(1);
    expect(await env.tj.journal.deadLetters.list()).toEqual([]);
    await env.tj.journal.deadLetters.add(
      job.jobId,
      { class: "unknown-agent", error: "no executor runs agent ghost", deliveries: 0 },
      held.lease,
    );
    expect(await sweep()).toBe(0);
    expect(await env.held("ghost")).toBe(0);
    expect(await deadEvents(env, job.jobId)).toBe(1);
  });

  it("are dead-lettered exactly once by two executors that both sweep, and dlq ls lists each", async () => {
    await using env = await setup();
    const a = await env.start();
    const b = await env.start();
    const ids = ["wire-ghost-4", "wire-ghost-5", "wire-ghost-6"];
    for (const jobId of ids) await env.publish({ jobId, agent: "ghost", input: {} });
    for (const jobId of ids) expect((await deadLetter(env, jobId)).class).toBe("unknown-agent");
    await waitFor("the ghost subject purged", async () => (await env.held("ghost")) === 0);
    // A later job, dead-lettered once the sweeps after the purge have run.
    await env.publish({ jobId: "wire-ghost-7", agent: "ghost", input: {} });
    await deadLetter(env, "wire-ghost-7");
    await waitFor("the ghost subject purged", async () => (await env.held("ghost")) === 0);
    const all = [...ids, "wire-ghost-7"];
    expect((await env.tj.journal.deadLetters.list()).map((d) => d.jobId).sort()).toEqual(all);
    for (const jobId of all) expect(await deadEvents(env, jobId)).toBe(1);
    const counted = async (ex: Executor) =>
      (await ex.metrics.deadLetters.get()).values[0]?.value ?? 0;
    // Each executor counts its dead letter just after the journal took it: wait for the counts.
    const total = async () => (await counted(a)) + (await counted(b));
    await waitFor(
      "both executors counted their dead letters",
      async () => (await total()) >= all.length,
    );
    expect(await total()).toBe(all.length);
    expect((await listDeadLetters(env.tj.journal)).jobs.map((j) => j.jobId).sort()).toEqual(all);
  });
});

describe("jobs another NATS client publishes for an agent some executor runs", () => {
  it("runs a job for a configured agent normally and never dead-letters it", async () => {
    await using env = await setup();
    await env.start();
    await env.publish({ jobId: "wire-w-1", agent: "writer", input: { countFile: env.counts } });
    await waitFor("the writer's output", () => env.tj.journal.outputs.has("wire-w-1"));
    // A ghost job published after it is dead-lettered: sweeps have run since the writer's job.
    await env.publish({ jobId: "wire-ghost-8", agent: "ghost", input: {} });
    await deadLetter(env, "wire-ghost-8");
    expect((await env.tj.journal.deadLetters.list()).map((d) => d.jobId)).toEqual(["wire-ghost-8"]);
    expect(await runCounts(env.counts)).toEqual({ "wire-w-1": 1 });
    expect(await env.held("writer")).toBe(1);
  });

  it("leaves a job to the consumer that an executor with another journal and config created, even while that executor is stopped", async () => {
    await using env = await setup();
    const elsewhere = await tempJournal();
    env.defer(() => elsewhere.dispose());
    const otherConfig: Config = {
      ...env.config,
      agents: { other: { ...(env.config.agents.writer as Config["agents"][string]) } },
    };
    const run = async (job: Job) => ({ summary: `other did ${job.jobId}`, effects: [] });
    const startOther = async () => {
      const other = createExecutor({
        config: otherConfig,
        journal: elsewhere.journal,
        logger: silentLogger(),
        unknownAgentSweepMs: 50,
        run,
      });
      await other.start();
      return other;
    };
    // The other executor creates the consumer of "other", then stops: the consumer stays.
    await (await startOther()).stop();
    await env.start();
    await env.publish({ jobId: "wire-o-1", agent: "other", input: {} });
    await env.publish({ jobId: "wire-ghost-9", agent: "ghost", input: {} });
    await deadLetter(env, "wire-ghost-9");
    expect((await env.tj.journal.deadLetters.list()).map((d) => d.jobId)).toEqual(["wire-ghost-9"]);
    expect(await env.tj.journal.jobs.get("wire-o-1")).toBeUndefined();
    expect(await env.held("other")).toBe(1);
    // Purged before the other executor (which sweeps too) starts again.
    await waitFor("the ghost subject purged", async () => (await env.held("ghost")) === 0);
    const other = await startOther();
    try {
      await waitFor("the other executor's output", () => elsewhere.journal.outputs.has("wire-o-1"));
      expect(await elsewhere.journal.deadLetters.list()).toEqual([]);
    } finally {
      await other.stop();
    }
  });
});
