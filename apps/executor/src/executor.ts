import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import { parseSubmission, submitOutput } from "@idem/core";
import type { JobClaimResult, JobLease, JournalStore, RecordResult } from "@idem/journal";
import {
  type AgentConsumer,
  closeNats,
  connectNats,
  createJobPublisher,
  type DeadLetterAdvisory,
  ensureAgentConsumer,
  ensureDeadLetterStream,
  ensureJobsStream,
  type JobPublisher,
  type MessageLoop,
  startDeadLetterMonitor,
  startMessageLoop,
  submitSubject,
} from "@idem/nats";
import {
  type AgentOutput,
  type Clock,
  type Config,
  canonicalJson,
  checkConfigInvariants,
  classifyError,
  describeError,
  effectTargets,
  FAILURE_CLASSES,
  type FailureClass,
  type FaultHook,
  IdemError,
  type Job,
  noFault,
  systemClock,
  validateJob,
  validateOutput,
} from "@idem/schema";
import type { JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import {
  type AgentRunner,
  createCommandRunner,
  type RunContext,
  runWithTimeout,
} from "./agent-runner.js";
import { checkDeadLetterRate } from "./dead-letter-alert.js";
import { createExecutorMetrics, type ExecutorMetrics } from "./executor-metrics.js";
import { createLogger, type Logger } from "./logger.js";

export interface CreateExecutorOptions {
  config: Config;
  journal: JournalStore;
  /**
   * An in-process agent: called with the job, returns its AgentOutput (`jobId`/`agent` may be
   * omitted). Without it the agent command protocol runs `agents.<name>.command`.
   */
  run?: (job: Job, context: RunContext) => Promise<unknown>;
  /** A custom runner (overrides `run`). */
  runner?: AgentRunner;
  /** Agents to consume; default every configured agent. */
  agents?: readonly string[];
  /** Timeout of an agent absent from `config.agents` (in-process runs); default 900 s. */
  defaultTimeoutMs?: number;
  logger?: Logger;
  metrics?: ExecutorMetrics;
  /** Fault points `executor.after-run` and `executor.after-record` (crash drills); no-op by default. */
  fault?: FaultHook;
  clock?: Clock;
  /** This executor's name in journal leases; default `<host>:<pid>:<random>`. */
  owner?: string;
  /** An open NATS connection to use (not drained on stop); default: connect to `config.nats.url`. */
  nc?: NatsConnection;
  /** Embedded queue: how long to wait when no job is due; default 100 ms. */
  pollMs?: number;
  /** Serve the NATS submit subject (`<prefix>.submit`); default true on JetStream. */
  natsSubmit?: boolean;
}

/** A running executor; `start()` once, `stop()` drains. */
export interface Executor {
  readonly transport: "jetstream" | "embedded";
  readonly metrics: ExecutorMetrics;
  readonly owner: string;
  /**
   * Checks invariant 7 before any connection, provisions the stream and consumers (JetStream),
   * republishes outbox jobs missing from the stream, and starts consuming.
   * @throws INVARIANT_VIOLATION (exit 3) for an unsafe config or a stream/consumer that differs;
   * INVALID_CONFIG when there is no agent to consume.
   */
  start(): Promise<void>;
  /** Stops taking deliveries, lets the ones in flight finish, drains NATS. Idempotent. */
  stop(): Promise<void>;
  /** Deliveries being worked on right now. */
  inFlight(): number;
  /** The JetStream publisher (after start, JetStream only) for `enqueueJob`. */
  readonly publisher: JobPublisher | undefined;
  /**
   * Resolves with the journal's failure when the journal can no longer make a write durable (see
   * `JournalStore.failure`): the executor has stopped taking deliveries, leaves the ones it holds
   * unacked for redelivery, and the process must stop and be restarted. Pending while healthy.
   */
  readonly fatal: Promise<IdemError>;
}

/** One delivery of one job, whatever the transport. */
interface Delivery {
  job: Job;
  /** Deliveries of this job on its transport, this one included. */
  deliveries: number;
  claim(): Promise<JobClaimResult>;
  heartbeat(lease: JobLease | undefined): Promise<void>;
  /** The output is recorded (or was already): settle the delivery for good. */
  ack(): Promise<void>;
  /** Give the delivery back to be redelivered after `delayMs`. */
  later(delayMs: number): Promise<void>;
  /** Never deliver this message again (dead-lettered). */
  giveUp(): Promise<void>;
}

/** Throws INVARIANT_VIOLATION when the config breaks DESIGN.md invariant 7. */
export function assertConfigInvariants(config: Config): void {
  const violations = checkConfigInvariants(config);
  if (violations.length > 0) {
    throw new IdemError(
      "INVARIANT_VIOLATION",
      violations.map((v) => `${v.key}: ${v.message} (fix: ${v.fix})`).join("\n"),
      { details: { violations } },
    );
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Fills in `jobId` and `agent` per the agent command protocol; present ones must match the job. */
function completeOutput(raw: unknown, job: Job): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const o = raw as Record<string, unknown>;
  const issues = [];
  if (o.jobId !== undefined && o.jobId !== job.jobId)
    issues.push({ path: "jobId", message: `is "${String(o.jobId)}", the job is "${job.jobId}"` });
  if (o.agent !== undefined && o.agent !== job.agent)
    issues.push({
      path: "agent",
      message: `is "${String(o.agent)}", the job's agent is "${job.agent}"`,
    });
  if (issues.length > 0) {
    throw new IdemError(
      "INVALID_INPUT",
      `the agent's output does not match its job: ${issues.map((i) => `${i.path} ${i.message}`).join("; ")}`,
      {
        details: { issues },
      },
    );
  }
  return { ...o, jobId: job.jobId, agent: job.agent };
}

/**
 * Creates the executor: consumes jobs (JetStream when `config.nats` is set, else the journal's
 * embedded queue), skips and acks jobs whose output is recorded, takes the job's in-progress claim,
 * runs the agent once with heartbeats, validates and records its output, and only then acks.
 * A journal that cannot take the record keeps the delivery alive and the record is retried; the
 * agent is never re-run for it. Failed deliveries are retried after `queue.backoffMs`, and
 * dead-lettered after `queue.maxDeliver`.
 */
export function createExecutor(options: CreateExecutorOptions): Executor {
  const { config, journal } = options;
  const clock = options.clock ?? systemClock;
  const log = options.logger ?? createLogger();
  const metrics = options.metrics ?? createExecutorMetrics();
  const fault = options.fault ?? noFault;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const runner = options.runner ?? options.run ?? createCommandRunner(config);
  const agents = [...(options.agents ?? Object.keys(config.agents))];
  const transport = config.nats ? "jetstream" : "embedded";
  const queue = config.queue;
  const stopController = new AbortController();
  /** Aborted when the journal fails for good: agents still running are stopped, not waited for. */
  const fatalController = new AbortController();
  // One listener per run in flight, as many as maxAckPending: not a leak.
  setMaxListeners(Number.POSITIVE_INFINITY, fatalController.signal);
  const inflight = new Set<Promise<void>>();
  /** Job IDs this executor is working on (invariant 3 within one process). */
  const working = new Set<string>();
  let nc: NatsConnection | undefined;
  let ownConnection = false;
  let js: JetStreamClient | undefined;
  let jsm: JetStreamManager | undefined;
  let publisher: JobPublisher | undefined;
  const loops: MessageLoop[] = [];
  let submitSub: Subscription | undefined;
  let embeddedLoop: Promise<void> | undefined;
  let started = false;
  let stopping: Promise<void> | undefined;
  let failed = false;
  let onFatal: (e: IdemError) => void = () => {};
  const fatal = new Promise<IdemError>((resolve) => {
    onFatal = resolve;
  });

  const timeoutOf = (agent: string) =>
    config.agents[agent]?.timeoutMs ?? options.defaultTimeoutMs ?? 900_000;
  const backoffFor = (deliveries: number) =>
    queue.backoffMs.length === 0
      ? 0
      : (queue.backoffMs[Math.min(deliveries - 1, queue.backoffMs.length - 1)] as number);

  /**
   * True when the journal has failed for good (a failed fsync): retrying in this process cannot
   * succeed. The first call stops taking deliveries and resolves `fatal`; the deliveries held are
   * left unacked, so JetStream (or the lease, embedded) hands them to a healthy executor.
   */
  function journalFailed(): boolean {
    const failure = journal.failure;
    if (!failure) return false;
    if (!failed) {
      failed = true;
      log.error(
        { err: describeError(failure) },
        "the journal can no longer make writes durable: taking no more deliveries; restart this process",
      );
      stopController.abort();
      fatalController.abort("the journal can no longer record their outputs");
      submitSub?.unsubscribe();
      // Not awaited: a handler calling this would wait for itself.
      void Promise.allSettled(loops.map((l) => l.stop()));
      onFatal(failure);
    }
    return true;
  }

  async function deadLettered(jobId: string) {
    metrics.deadLetters.inc();
    await checkDeadLetterRate({ journal, config, clock, log, jobId });
  }

  /** Records the output, retrying for as long as the journal refuses it (invariant 4). */
  async function recordDurably(
    output: AgentOutput,
    canonical: string,
    log: Logger,
  ): Promise<RecordResult> {
    const options = {
      source: "executor",
      targets: effectTargets(output, config),
      actor: owner,
      canonical,
    } as const;
    let delay = 50;
    for (;;) {
      try {
        return await journal.record(output, options);
      } catch (e) {
        // Not a hiccup: no retry in this process can make it durable. Unacked, the delivery goes
        // to a healthy executor once its ack wait ends.
        if (journalFailed()) throw e;
        metrics.recordRetries.inc();
        log.warn(
          { err: describeError(e), class: classifyError(e), retryInMs: delay },
          "the journal could not take the output; keeping it and retrying (not acked)",
        );
        await sleep(delay);
        delay = Math.min(delay * 2, 1_000);
      }
    }
  }

  async function handle(d: Delivery, heartbeatMs: number): Promise<void> {
    const job = d.job;
    const jlog = log.child({ jobId: job.jobId, agent: job.agent, delivery: d.deliveries });
    metrics.deliveries.inc({ transport });
    if (working.has(job.jobId)) {
      // This process is running this job already (a redelivery overtook a slow delivery): never run
      // the agent twice, whatever the journal claim says.
      jlog.info("this job is in progress here: waiting");
      metrics.naks.inc({ reason: "held" });
      await d.later(Math.max(100, heartbeatMs * 3));
      return;
    }
    // The claim checks the journal first: a recorded output (durable before the answer) means a
    // redelivery, acked without running the agent.
    const claim = await d.claim();
    if (claim.status === "recorded") {
      metrics.skippedRedeliveries.inc();
      jlog.info("output already recorded: acking the redelivery without running the agent");
      await journal.appendEvent({
        jobId: job.jobId,
        type: "redelivery.skipped",
        data: { deliveries: d.deliveries, transport },
        actor: owner,
      });
      await d.ack();
      return;
    }
    if (claim.status === "held") {
      const delay = Math.max(100, claim.until - clock.now() + 50);
      jlog.info({ retryInMs: delay }, "another delivery of this job is in progress: waiting");
      metrics.naks.inc({ reason: "held" });
      await d.later(delay);
      return;
    }
    if (claim.status === "dead" || claim.status === "conflict") {
      jlog.warn(
        { status: claim.status },
        claim.status === "dead"
          ? "job is dead-lettered: dropping this delivery (use idem dlq retry)"
          : "a job with this ID but another input is already known: dropping this delivery",
      );
      await d.ack();
      return;
    }
    const lease = claim.lease;
    working.add(job.jobId);

    // Heartbeats keep the delivery (and the claim) alive while the agent runs and while the record
    // is retried.
    const beat = setInterval(() => {
      d.heartbeat(lease).catch((e) => {
        if (!journalFailed()) jlog.warn({ err: describeError(e) }, "heartbeat failed");
      });
    }, heartbeatMs);
    try {
      let output: AgentOutput;
      let canonical: string;
      const started = performance.now();
      try {
        const raw = await runWithTimeout(
          runner,
          job,
          timeoutOf(job.agent),
          jlog,
          fatalController.signal,
        );
        fault("executor.after-run");
        const v = validateOutput(completeOutput(raw, job), config);
        if (!v.ok) {
          metrics.invalid.inc({ source: "executor" });
          throw new IdemError(
            "INVALID_INPUT",
            `invalid output: ${v.issues.map((i) => `${i.path || "(root)"} ${i.message}`).join("; ")}`,
            { details: { issues: v.issues } },
          );
        }
        output = v.value;
        // The canonical JSON is what the journal stores: measured here, handed to the record.
        canonical = canonicalJson(output);
        const size = Buffer.byteLength(canonical, "utf8");
        if (size > config.limits.maxOutputBytes) {
          throw new IdemError(
            "OUTPUT_TOO_LARGE",
            `the output is ${size} bytes; limits.maxOutputBytes is ${config.limits.maxOutputBytes}`,
          );
        }
        metrics.agentRunSeconds.observe(
          { agent: job.agent, outcome: "ok" },
          (performance.now() - started) / 1000,
        );
      } catch (e) {
        metrics.agentRunSeconds.observe(
          { agent: job.agent, outcome: "failed" },
          (performance.now() - started) / 1000,
        );
        await fail(d, lease, e, jlog);
        return;
      }
      const result = await recordDurably(output, canonical, jlog);
      metrics.records.inc({ source: "executor", status: result.status });
      if (result.status === "conflict") {
        metrics.conflicts.inc({ source: "executor" });
        jlog.warn(
          { existingHash: result.existingHash },
          "another output for this job was recorded first; this one is kept in rejections",
        );
      }
      fault("executor.after-record");
      clearInterval(beat);
      await d.ack();
      jlog.info({ status: result.status }, "output recorded and acked");
    } finally {
      clearInterval(beat);
      working.delete(job.jobId);
    }
  }

  async function fail(d: Delivery, lease: JobLease, e: unknown, jlog: Logger): Promise<void> {
    // Not the job's failure: the delivery is left unacked, for a healthy executor, uncounted here.
    if (journalFailed()) return;
    const cls = classifyError(e);
    const error = describeError(e);
    const job = d.job;
    if (d.deliveries >= queue.maxDeliver) {
      jlog.error({ class: cls, err: error }, "delivery failed for the last time: dead letter");
      try {
        await journal.deadLetterJob(
          job.jobId,
          { class: cls, error, deliveries: d.deliveries, agent: job.agent },
          lease,
        );
        await deadLettered(job.jobId);
      } catch (dlErr) {
        // On JetStream the MAX_DELIVERIES/MSG_TERMINATED advisory records it later.
        jlog.error({ err: describeError(dlErr) }, "could not record the dead letter");
      }
      await d.giveUp();
      return;
    }
    const delay = backoffFor(d.deliveries);
    jlog.warn(
      { class: cls, err: error, retryInMs: delay },
      "delivery failed: retrying after backoff",
    );
    metrics.naks.inc({ reason: "failed" });
    try {
      await journal.failJob(lease, { class: cls, error, nextAt: clock.now() + delay });
    } catch (fErr) {
      jlog.error({ err: describeError(fErr) }, "could not record the failed delivery");
    }
    await d.later(delay);
  }

  function track(p: Promise<void>): void {
    const q = p
      .catch((e) => {
        if (!journalFailed()) log.error({ err: describeError(e) }, "delivery handler failed");
      })
      .finally(() => inflight.delete(q));
    inflight.add(q);
  }

  // --- JetStream --------------------------------------------------------------------------------

  function jetStreamDelivery(msg: JsMsg, job: Job): Delivery {
    let claimUntil = 0;
    return {
      job,
      deliveries: msg.info.deliveryCount,
      claim: async () => {
        // The claim notes the delivery's stream sequence (a job published by another client has
        // no outbox row before it), so the outbox republish finds the job in the stream.
        const c = await journal.claimJob(job, {
          owner,
          leaseMs: timeoutOf(job.agent),
          streamSeq: msg.seq,
        });
        if (c.status === "acquired") claimUntil = c.lease.until;
        return c;
      },
      heartbeat: async (lease) => {
        msg.working();
        // The in-progress claim lives as long as this delivery does: extended by the heartbeats
        // (a journal write once half of it has passed), it expires only when this executor is gone.
        if (lease && clock.now() > claimUntil - timeoutOf(job.agent) / 2) {
          claimUntil = (await journal.extendJobLease(lease, timeoutOf(job.agent))).until;
        }
      },
      ack: async () => {
        try {
          await msg.ackAck({ timeout: 5_000 });
        } catch (e) {
          // Harmless: the redelivery finds the output recorded and is acked then.
          log.warn({ jobId: job.jobId, err: describeError(e) }, "ack not confirmed");
        }
      },
      later: async (delayMs) => msg.nak(delayMs),
      giveUp: async () => msg.term(),
    };
  }

  async function onDeadLetterAdvisory(a: DeadLetterAdvisory): Promise<void> {
    if (!a.job) {
      log.warn(
        { advisory: a.kind, streamSeq: a.streamSeq },
        "dead letter for a message that is gone or not a job",
      );
      return;
    }
    const jobId = a.job.jobId;
    if (await journal.has(jobId)) return;
    const row = await journal.getJob(jobId);
    if (row?.state === "dead") return;
    if (row?.state === "running" && row.leaseUntil !== null && row.leaseUntil > clock.now()) return;
    const failed = await journal.events.list({ jobId, type: "job.failed" });
    const lastClass = failed.at(-1)?.data?.class;
    const cls: FailureClass =
      typeof lastClass === "string" && (FAILURE_CLASSES as readonly string[]).includes(lastClass)
        ? (lastClass as FailureClass)
        : "infrastructure";
    const error =
      row?.lastError ??
      `${a.kind === "terminated" ? "terminated" : "max deliveries reached"} after ${a.deliveries} deliveries without a recorded failure (ack wait expired: crash or stall)`;
    await journal.deadLetterJob(jobId, {
      class: cls,
      error,
      deliveries: a.deliveries,
      agent: a.job.agent,
    });
    log.error(
      { jobId, advisory: a.kind, class: cls, err: error },
      "job dead-lettered by JetStream",
    );
    await deadLettered(jobId);
  }

  /** Republishes outbox jobs younger than max_age that are missing from the stream (same msg id). */
  async function republishOutbox(): Promise<void> {
    if (!config.nats || !jsm || !publisher) return;
    const pending = await journal.pendingJobs({ since: clock.now() - config.nats.maxAgeMs });
    let republished = 0;
    for (const row of pending) {
      if (row.streamSeq !== null) {
        const found = await jsm.streams
          .getMessage(config.nats.stream, { seq: row.streamSeq })
          .catch(() => null);
        const msgId = found?.header?.get("Nats-Msg-Id") ?? "";
        if (found && (msgId === row.jobId || msgId.startsWith(`${row.jobId}#`))) continue;
      }
      const pub = await publisher.publish({
        jobId: row.jobId,
        agent: row.agent,
        input: row.input as Job["input"],
      });
      await journal.setJobStreamSeq(row.jobId, pub.seq);
      republished += 1;
    }
    if (republished > 0)
      log.info({ republished }, "republished outbox jobs missing from the stream");
  }

  async function startJetStream(): Promise<void> {
    const nats = config.nats;
    if (!nats) return;
    nc = options.nc;
    if (!nc) {
      // A server that is down when the executor starts is waited for, like one that goes down later.
      for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
        try {
          nc = await connectNats(nats.url, `idem-executor ${owner}`);
          break;
        } catch (e) {
          if ((e as { name?: unknown }).name !== "ConnectionError" || stopController.signal.aborted)
            throw e;
          log.warn(
            { err: describeError(e), retryInMs: delay },
            "NATS is not reachable yet: retrying",
          );
          await sleep(delay, stopController.signal);
        }
      }
      ownConnection = true;
    }
    const conn = nc;
    js = jetstream(conn);
    jsm = await jetstreamManager(conn);
    await ensureJobsStream(jsm, nats);
    await ensureDeadLetterStream(jsm, nats);
    publisher = createJobPublisher({ js, nats, clock });
    const consumers: AgentConsumer[] = [];
    for (const agent of agents)
      consumers.push(await ensureAgentConsumer(jsm, { nats, queue }, agent));
    await republishOutbox();
    (async () => {
      for await (const s of conn.status()) {
        if (s.type === "disconnect" || s.type === "reconnect")
          log.warn({ nats: s.type }, "NATS connection");
      }
    })().catch(() => {});
    for (const c of consumers) {
      const heartbeatMs = Math.max(
        20,
        Math.floor(Math.min(c.effectiveAckWaitMs, queue.ackWaitMs, ...queue.backoffMs) / 3),
      );
      loops.push(
        startMessageLoop({
          js,
          stream: c.stream,
          consumer: c.name,
          concurrency: queue.maxAckPending,
          onError: (e) => log.warn({ err: describeError(e), consumer: c.name }, "consumer loop"),
          handler: async (msg) => {
            let parsed: unknown;
            try {
              parsed = msg.json();
            } catch {
              parsed = undefined;
            }
            const v = validateJob(parsed);
            if (!v.ok || v.value.agent !== c.agent) {
              log.error(
                { subject: msg.subject, seq: msg.seq, issues: v.ok ? undefined : v.issues },
                "not a valid job for this consumer: terminated",
              );
              msg.term();
              return;
            }
            const p = handle(jetStreamDelivery(msg, v.value), heartbeatMs);
            track(p);
            await p;
          },
        }),
      );
    }
    loops.push(
      await startDeadLetterMonitor({
        js,
        jsm,
        nats,
        onDeadLetter: onDeadLetterAdvisory,
        onError: (e) => log.warn({ err: describeError(e) }, "dead-letter monitor"),
      }),
    );
    if (options.natsSubmit !== false) {
      submitSub = conn.subscribe(submitSubject(nats.subjectPrefix), {
        queue: "idem-executor",
        callback: (err, msg) => {
          if (err) return;
          void (async () => {
            let answer: unknown;
            if (msg.data.length > config.api.maxBodyBytes) {
              answer = {
                status: "invalid",
                jobId: null,
                issues: [
                  {
                    path: "",
                    message: `is larger than api.maxBodyBytes (${config.api.maxBodyBytes})`,
                  },
                ],
              };
            } else {
              const parsed = parseSubmission(msg.string(), config.limits.maxOutputBytes);
              try {
                answer = parsed.ok
                  ? await submitOutput(journal, config, parsed.value, "nats", metrics)
                  : parsed.result;
              } catch (e) {
                answer = { status: "error", error: describeError(e), class: classifyError(e) };
              }
            }
            msg.respond(JSON.stringify(answer));
          })();
        },
      });
    }
    await conn.flush();
  }

  // --- embedded queue ---------------------------------------------------------------------------

  async function embeddedLoopFn(): Promise<void> {
    const signal = stopController.signal;
    const pollMs = options.pollMs ?? 100;
    const heartbeatMs = Math.max(20, Math.floor(queue.ackWaitMs / 3));
    while (!signal.aborted) {
      if (inflight.size >= queue.maxAckPending) {
        await Promise.race(inflight);
        continue;
      }
      let claimed: Awaited<ReturnType<JournalStore["claimNextJob"]>>;
      try {
        claimed = await journal.claimNextJob({
          owner,
          leaseMs: queue.ackWaitMs,
          agents,
          maxDeliver: queue.maxDeliver,
          // Jobs whose last delivery lost its lease (this or another executor died running it)
          // are dead-lettered by the claim itself: counted and alerted on like the others.
          onDeadLettered: (jobIds) => {
            for (const jobId of jobIds) void deadLettered(jobId);
          },
        });
      } catch (e) {
        if (journalFailed()) return;
        log.warn({ err: describeError(e) }, "could not claim from the embedded queue");
        await sleep(pollMs, signal);
        continue;
      }
      if (!claimed) {
        await sleep(pollMs, signal);
        continue;
      }
      const { lease, job: row } = claimed;
      if (working.has(row.jobId)) {
        // Our own delivery of this job is still retrying its record (its lease lapsed while the
        // journal was unavailable): never run the agent a second time for it.
        continue;
      }
      const job: Job = { jobId: row.jobId, agent: row.agent, input: row.input as Job["input"] };
      let current = lease;
      const delivery: Delivery = {
        job,
        deliveries: lease.deliveries,
        claim: async () => ({ status: "acquired", lease, job: row }),
        heartbeat: async () => {
          current = await journal.extendJobLease(current, queue.ackWaitMs);
        },
        ack: async () => {},
        later: async () => {},
        giveUp: async () => {},
      };
      track(handle(delivery, heartbeatMs));
    }
  }

  return {
    transport,
    metrics,
    owner,
    get publisher() {
      return publisher;
    },
    fatal,
    inFlight: () => inflight.size,
    async start() {
      if (started) throw new IdemError("INVALID_STATE", "the executor is already started");
      started = true;
      assertConfigInvariants(config);
      if (agents.length === 0) {
        throw new IdemError(
          "INVALID_CONFIG",
          "no agent to run: configure agents.<name> in the config",
          {
            details: { field: "agents" },
          },
        );
      }
      if (transport === "jetstream") await startJetStream();
      else embeddedLoop = embeddedLoopFn();
      log.info({ transport, agents, owner }, "executor started");
    },
    stop() {
      stopping ??= (async () => {
        stopController.abort();
        submitSub?.unsubscribe();
        await Promise.allSettled(loops.map((l) => l.stop()));
        await embeddedLoop;
        await Promise.allSettled([...inflight]);
        // Bounded: with the server gone, a drain would wait for a reconnect and SIGTERM would hang.
        if (nc && ownConnection) await closeNats(nc);
        log.info("executor stopped");
      })();
      return stopping;
    },
  };
}
