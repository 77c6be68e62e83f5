// enqueue over JetStream against the real thing: a nats-server of @idem/testing, idem's jobs stream
// provisioned by @idem/nats, idem's own JobPublisher beside the client (the client mirrors its
// subject, msg id and payload without importing it: these tests prove they agree), and a real
// executor that runs what the client published.

import { createExecutor } from "@idem/executor";
import {
  closeNats,
  connectNats,
  createJobPublisher,
  ensureJobsStream,
  jobSubject,
} from "@idem/nats";
import { silentLogger } from "@idem/runtime";
import { type Config, type Job, parseConfig } from "@idem/schema";
import { type NatsServerHandle, startNatsServer, tempJournal } from "@idem/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, isIdemClientError, type JetStreamPublisher } from "../src/index.js";
import { waitFor } from "./helpers.js";

let server: NatsServerHandle;
let nc: NatsConnection;
beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, "client-test");
});
afterAll(async () => {
  await closeNats(nc);
  await server.stop();
});

/** idem's config for this server: the `nats` section as given, its defaults otherwise. */
function natsConfig(dir: string, nats: Record<string, unknown>): Config {
  const parsed = parseConfig(
    {
      journal: { path: `${dir}/journal.db` },
      agents: { writer: { command: [process.execPath, "-e", "0"], timeoutMs: 600_000 } },
      nats: { url: server.url, ...nats },
    },
    { dir },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

/** The real JetStream client, noting the msg id of each publish: tests wait for tries, not times. */
function counting(js: JetStreamPublisher, tries: string[]): JetStreamPublisher {
  return {
    publish: (subject, payload, options) => {
      tries.push(options.msgID);
      return js.publish(subject, payload, options);
    },
  };
}

/** idem's jobs stream as the executor provisions it, and its manager. */
async function provision(config: Config) {
  const jsm = await jetstreamManager(nc);
  await ensureJobsStream(jsm, config.nats as NonNullable<Config["nats"]>);
  return jsm;
}

describe("enqueue over JetStream", () => {
  it("publishes on idem's default prefix a job a real executor runs; the same job again, or another input under its ID, is a duplicate", async () => {
    const tj = await tempJournal();
    const config = natsConfig(tj.dir, {});
    await provision(config);
    const executor = createExecutor({
      config,
      journal: tj.journal,
      logger: silentLogger(),
      run: async (job) => ({ summary: `input ${JSON.stringify(job.input)}`, effects: [] }),
    });
    await executor.start();
    try {
      // No baseUrl: an orchestrator that only enqueues needs nothing but its NATS connection.
      const client = createClient({ jetstream: jetstream(nc) });
      const job: Job = { jobId: "js-client-1", agent: "writer", input: { n: 1 } };
      const first = await client.enqueue(job);
      expect(first).toEqual({ jobId: job.jobId, stream: "IDEM_JOBS", seq: 1, duplicate: false });
      expect(await client.enqueue(job)).toEqual({ ...first, duplicate: true });
      // JetStream dedupes by msg id alone: another input under the same job ID is dropped too.
      expect(await client.enqueue({ ...job, input: { n: 2 } })).toEqual({
        ...first,
        duplicate: true,
      });
      await waitFor("the executor records js-client-1", () => tj.journal.outputs.has(job.jobId));
      const record = await tj.journal.outputs.get(job.jobId);
      expect(record?.output.summary).toBe('input {"n":1}');
    } finally {
      await executor.stop();
      await tj.dispose();
    }
  });

  it("publishes the subject, msg id and bytes that idem's JobPublisher publishes", async () => {
    const tj = await tempJournal();
    const prefix = "acme.idem";
    const config = natsConfig(tj.dir, { stream: "AGREE_JOBS", subjectPrefix: prefix });
    const nats = config.nats as NonNullable<Config["nats"]>;
    try {
      const jsm = await provision(config);
      const js = jetstream(nc);
      const publisher = createJobPublisher({ js, nats });
      // A structural JetStreamPublisher: the client's type accepts @nats-io/jetstream's client.
      const typed: JetStreamPublisher = js;
      const client = createClient({ jetstream: typed, subjectPrefix: prefix });
      const job: Job = {
        jobId: "agree-1",
        agent: "writer",
        input: { title: "Grüße", list: [1, 2.5, null, true], nested: { "a b": "\u2028" } },
        createdAt: "2026-11-25T06:00:00Z",
      };
      const ours = await client.enqueue(job);
      const theirs = await publisher.publish(job, { msgId: `${job.jobId}#check` });
      const a = await jsm.streams.getMessage(nats.stream, { seq: ours.seq });
      const b = await jsm.streams.getMessage(nats.stream, { seq: theirs.seq });
      expect(a?.subject).toBe(jobSubject(prefix, job.agent));
      expect(b?.subject).toBe(a?.subject);
      expect(Buffer.from(a?.data ?? [])).toEqual(Buffer.from(b?.data ?? []));
      expect(a?.header?.get("Nats-Msg-Id")).toBe(job.jobId);
      // The same msg id both ways: each answers duplicate for what the other published.
      expect(await publisher.publish(job)).toMatchObject({ seq: ours.seq, duplicate: true });
      const other: Job = { jobId: "agree-2", agent: "writer", input: [] };
      const byIdem = await publisher.publish(other);
      expect(await client.enqueue(other)).toEqual({ ...byIdem, duplicate: true });
    } finally {
      await tj.dispose();
    }
  });

  it("refuses an invalid job naming the field and publishes nothing; a job over max_payload is TOO_LARGE, one no stream captures UNAVAILABLE", async () => {
    const tj = await tempJournal();
    const config = natsConfig(tj.dir, { stream: "INVALID_JOBS", subjectPrefix: "inv" });
    try {
      const jsm = await provision(config);
      const client = createClient({ jetstream: jetstream(nc), subjectPrefix: "inv" });
      const bad = await client
        .enqueue({ jobId: "no spaces", agent: "writer", input: {} })
        .catch((e: unknown) => e);
      expect(isIdemClientError(bad, "INVALID_INPUT")).toBe(true);
      expect((bad as { body: { problems: string[] } }).body.problems).toEqual([
        expect.stringMatching(/^jobId: /),
      ]);
      const extra = { jobId: "j-2", agent: "writer", input: {}, priority: 1 } as unknown as Job;
      const closed = await client.enqueue(extra).catch((e: unknown) => e);
      expect(isIdemClientError(closed, "INVALID_INPUT")).toBe(true);
      expect((closed as Error).message).toMatch(/priority/);
      const huge = { jobId: "j-3", agent: "writer", input: "x".repeat(2 * 1024 * 1024) };
      const large = await client.enqueue(huge).catch((e: unknown) => e);
      expect(isIdemClientError(large, "TOO_LARGE")).toBe(true);
      expect((await jsm.streams.info("INVALID_JOBS")).state.messages).toBe(0);
      // A prefix no stream captures finds no responders: retried with the same msg id, then UNAVAILABLE.
      const tries: string[] = [];
      const nowhere = createClient({
        jetstream: counting(jetstream(nc), tries),
        subjectPrefix: "nowhere",
        retry: { attempts: 3, initialMs: 1 },
      });
      const lost = await nowhere
        .enqueue({ jobId: "j-4", agent: "writer", input: {} })
        .catch((e) => e);
      expect(isIdemClientError(lost, "UNAVAILABLE")).toBe(true);
      expect((lost as Error).message).toMatch(/no responders/);
      expect(tries).toEqual(["j-4", "j-4", "j-4"]);
    } finally {
      await tj.dispose();
    }
  });

  it("retries a publish that got no PubAck with the same msg id until the server is back, and the stream holds the job once", async () => {
    await using own = await startNatsServer();
    const conn = await connectNats(own.url, "client-retry-test");
    const tj = await tempJournal();
    try {
      const config = natsConfig(tj.dir, {
        url: own.url,
        stream: "RETRY_JOBS",
        subjectPrefix: "rt",
      });
      const jsm = await jetstreamManager(conn);
      await ensureJobsStream(jsm, config.nats as NonNullable<Config["nats"]>);
      const tries: string[] = [];
      const client = createClient({
        jetstream: counting(jetstream(conn), tries),
        subjectPrefix: "rt",
        retry: { attempts: 10_000, initialMs: 20, maxMs: 200 },
        timeoutMs: 250,
        deadlineMs: 300_000,
      });
      await own.kill("SIGKILL");
      const job: Job = { jobId: "retry-1", agent: "writer", input: {} };
      const enqueued = client.enqueue(job);
      await waitFor("a second try while the server is down", async () => tries.length >= 2);
      await own.restart();
      const result = await enqueued;
      expect(result).toMatchObject({ jobId: "retry-1", stream: "RETRY_JOBS" });
      expect(new Set(tries)).toEqual(new Set(["retry-1"]));
      expect((await jsm.streams.info("RETRY_JOBS")).state.messages).toBe(1);
    } finally {
      await closeNats(conn);
      await tj.dispose();
    }
  });
});
