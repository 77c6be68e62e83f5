import { setMaxListeners } from "node:events";
import { assertConfigInvariants, loadKinds } from "@idem/core";
import { createDeliveryHandler } from "@idem/core/execute";
import type { JournalStore } from "@idem/journal";
import {
  closeNats,
  connectNats,
  type JobPublisher,
  type NatsConnection,
  openUnconsumedJobs,
} from "@idem/nats";
import { createLogger, createOwnerId, type Logger, noopTracing, type Tracing } from "@idem/runtime";
import {
  aliasOf,
  type Clock,
  type Config,
  describeError,
  type FaultHook,
  IdemError,
  type Job,
  natsServers,
  noFault,
  retry,
  systemClock,
} from "@idem/schema";
import {
  type AgentRunner,
  createCommandRunner,
  type McpAgentHost,
  mcpHostMissing,
  type RunContext,
  runWithTimeout,
} from "./agent-runner.js";
import { checkDeadLetterRate } from "./dead-letter-alert.js";
import { createEmbeddedTransport } from "./embedded-transport.js";
import { createExecutorMetrics, type ExecutorMetrics } from "./executor-metrics.js";
import { createJetStreamTransport, type JetStreamTransport } from "./jetstream-transport.js";
import { createNatsSubmitTransport } from "./nats-submit-transport.js";
import type { ExecutorTransport, TransportContext } from "./transport.js";
import { announceAgents, createUnknownAgentSweep } from "./unknown-agents.js";

/** How to build an executor; only `config` and `journal` are required. */
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
  /**
   * The MCP host for the agents configured with `agents.<name>.mcp` (docs/mcp.md): `idem executor`
   * passes @idem/mcp's `createMcpAgentHost`. Without it such an agent refuses to start.
   */
  mcp?: McpAgentHost;
  /** Agents to consume; default every configured agent. */
  agents?: readonly string[];
  /** Timeout of an agent absent from `config.agents` (in-process runs); default 900 s. */
  defaultTimeoutMs?: number;
  logger?: Logger;
  metrics?: ExecutorMetrics;
  /** Fault points `executor.after-run` and `executor.after-record` (crash drills); no-op by default. */
  fault?: FaultHook;
  clock?: Clock;
  /** This executor's name in journal leases; default `createOwnerId()`, which another executor on this host can tell dead. */
  owner?: string;
  /** An open NATS connection to use (not drained on stop); default: connect to `nats.servers` (or `nats.url`). */
  nc?: NatsConnection;
  /** Embedded queue: how long to wait when no job is due; default `queue.pollMs`. */
  pollMs?: number;
  /** Serve the NATS submit subject (`<prefix>.submit`); default true on JetStream. */
  natsSubmit?: boolean;
  /** How often to look for jobs of agents nobody runs (see `createUnknownAgentSweep`); default 1 s. */
  unknownAgentSweepMs?: number;
  /**
   * Spans of each delivery, agent run and record, continuing the trace the job travels with
   * (`startTelemetry`); default off. The record keeps the trace context either way.
   */
  tracing?: Tracing;
}

/** A running executor; `start()` once, `stop()` drains. */
export interface Executor {
  readonly transport: "jetstream" | "embedded";
  readonly metrics: ExecutorMetrics;
  readonly owner: string;
  /**
   * Checks invariant 7 before any connection, provisions the stream and consumers (JetStream),
   * republishes outbox jobs missing from the stream, and starts consuming.
   * With no agent to run it consumes nothing and serves only the submit paths (agents elsewhere).
   * @throws INVARIANT_VIOLATION (exit 3) for an unsafe config or a stream/consumer that differs;
   * INVALID_CONFIG for an agent with `agents.<name>.mcp` and no MCP host (`mcp`) to run it.
   */
  start(): Promise<void>;
  /**
   * Stops taking deliveries and waits for the ones in flight, up to `graceMs` (default
   * `queue.stopGraceMs`); then abandons the rest: their agents' process groups are killed and their
   * jobs given back (`jobs.release`: due at once, the delivery uncounted; on JetStream nak'd for
   * redelivery at once). Logs which jobs it waits for, which finished and which it abandoned.
   * Drains NATS. Idempotent: a second call returns the first stop.
   */
  stop(options?: { graceMs?: number }): Promise<void>;
  /** Abandons what runs now, as at the end of the stop grace (a second Ctrl-C). Idempotent. */
  abandon(): void;
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
  const log = options.logger ?? createLogger({ name: "idem-executor" });
  const metrics = options.metrics ?? createExecutorMetrics();
  const owner = options.owner ?? createOwnerId();
  const agents = [...(options.agents ?? Object.keys(config.agents))];
  const transport = config.nats ? "jetstream" : "embedded";
  const tracing = options.tracing ?? noopTracing;
  const stopController = new AbortController();
  /** Aborted when the journal fails for good: agents still running are stopped, not waited for. */
  const fatalController = new AbortController();
  /** Aborted when a stopping executor gives up waiting for its agents (see `stop`). */
  const abandonController = new AbortController();
  /** What stops a running agent: the journal failing for good, or an abandoning stop. */
  const agentStop = AbortSignal.any([fatalController.signal, abandonController.signal]);
  // One listener per run in flight, as many as maxAckPending: not a leak.
  setMaxListeners(Number.POSITIVE_INFINITY, stopController.signal);
  setMaxListeners(Number.POSITIVE_INFINITY, fatalController.signal);
  setMaxListeners(Number.POSITIVE_INFINITY, agentStop);
  /** Jobs given back by an abandoning stop. */
  const abandoned: string[] = [];
  const inflight = new Set<Promise<void>>();
  let transports: ExecutorTransport[] = [];
  let jetStream: JetStreamTransport | undefined;
  let nc: NatsConnection | undefined;
  let ownConnection = false;
  /** The sweep for jobs of unknown agents. */
  let sweeping: Promise<void> | undefined;
  let started = false;
  let stopping: Promise<void> | undefined;
  let failed = false;
  let onFatal: (e: IdemError) => void = () => {};
  const fatal = new Promise<IdemError>((resolve) => {
    onFatal = resolve;
  });

  const timeoutOf = (agent: string) =>
    aliasOf(config.agents, agent)?.timeoutMs ?? options.defaultTimeoutMs ?? 900_000;

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
      // Not awaited: a handler calling this would wait for itself.
      for (const t of transports) void t.stop();
      onFatal(failure);
    }
    return true;
  }

  const runner = options.runner ?? options.run ?? createCommandRunner(config, { mcp: options.mcp });
  const handler = createDeliveryHandler({
    config,
    journal,
    runAgent: (job, jlog, cancel) =>
      runWithTimeout(runner, job, timeoutOf(job.agent), jlog, cancel),
    log,
    metrics,
    fault: options.fault ?? noFault,
    clock,
    owner,
    transport,
    journalFailed,
    fatalSignal: agentStop,
    abandoning: () => abandonController.signal.aborted,
    onAbandoned: (jobId) => abandoned.push(jobId),
    async onDeadLetter(jobId) {
      metrics.deadLetters.inc();
      await checkDeadLetterRate({ journal, config, clock, log, jobId });
    },
    tracing,
  });

  /** Gives up on the agents in flight: their process groups are killed, their jobs given back. */
  function abandon(why: string): void {
    if (abandonController.signal.aborted) return;
    const jobs = handler.inProgress();
    if (jobs.length > 0)
      log.warn({ jobs }, `${why}: abandoning ${jobs.length} job(s) whose agents still run`);
    abandonController.abort(why);
  }

  /** Waits for the deliveries in flight up to `graceMs`, saying which; abandons the rest. */
  async function drain(graceMs: number): Promise<void> {
    const waiting = handler.inProgress();
    if (waiting.length > 0) {
      log.info(
        { jobs: waiting, graceMs },
        `stopping: waiting up to ${graceMs / 1000} s (queue.stopGraceMs, --grace) for the agents of ${waiting.length} job(s); then they are killed and their jobs given back`,
      );
    }
    let timer: NodeJS.Timeout | undefined;
    const over = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.allSettled([...inflight]), over]);
    clearTimeout(timer);
    if (inflight.size > 0) abandon(`the stop grace of ${graceMs / 1000} s is over`);
    await Promise.allSettled([...inflight]);
    if (waiting.length > 0) {
      const given = new Set(abandoned);
      log.info(
        { finished: waiting.filter((j) => !given.has(j)), abandoned },
        abandoned.length === 0
          ? "every job in flight finished before the executor stopped"
          : `${abandoned.length} job(s) abandoned and given back: the next executor running their agent takes them (idem jobs lists them)`,
      );
    }
  }

  function track(p: Promise<void>): void {
    const q = p
      .catch((e) => {
        if (!journalFailed()) log.error({ err: describeError(e) }, "delivery handler failed");
      })
      .finally(() => inflight.delete(q));
    inflight.add(q);
  }

  const context: TransportContext = {
    config,
    journal,
    log,
    clock,
    owner,
    tracing,
    agents,
    stopSignal: stopController.signal,
    timeoutOf,
    deliver: (d, heartbeatMs) => {
      const p = handler.handle(d, heartbeatMs);
      track(p);
      return p;
    },
    inFlight: () => inflight.size,
    anySettled: () => Promise.race(inflight),
    isWorking: handler.isWorking,
    deadLettered: handler.deadLettered,
    journalFailed,
  };

  /** Connects to NATS; a server that is down now is waited for, like one that goes down later. */
  async function connect(url: string): Promise<NatsConnection> {
    return await retry(() => connectNats(url, `idem-executor ${owner}`), {
      initialMs: 250,
      maxMs: 5_000,
      retryable: (e) =>
        (e as { name?: unknown }).name === "ConnectionError" && !stopController.signal.aborted,
      onRetry: (e, delay) =>
        log.warn(
          { err: describeError(e), retryInMs: delay },
          "NATS is not reachable yet: retrying",
        ),
      signal: stopController.signal,
    });
  }

  return {
    transport,
    metrics,
    owner,
    get publisher() {
      return jetStream?.publisher;
    },
    fatal,
    inFlight: () => inflight.size,
    async start() {
      if (started) throw new IdemError("INVALID_STATE", "the executor is already started");
      started = true;
      assertConfigInvariants(config);
      // An MCP agent needs the MCP host to run (with the command runner): refused before anything.
      const mcpAgent = agents.find((a) => aliasOf(config.agents, a)?.mcp);
      if (mcpAgent !== undefined && !options.mcp && !options.runner && !options.run)
        throw mcpHostMissing(mcpAgent);
      // The effect kinds the outputs are checked by before record: idem's own and the config's.
      await loadKinds(config);
      if (config.nats) {
        nc = options.nc;
        if (!nc) {
          nc = await connect(natsServers(config.nats));
          ownConnection = true;
        }
        jetStream = createJetStreamTransport(context, nc);
        transports = [jetStream];
        if (options.natsSubmit !== false)
          transports.push(createNatsSubmitTransport(context, nc, metrics));
      } else if (agents.length > 0) {
        transports = [
          createEmbeddedTransport(context, { pollMs: options.pollMs ?? config.queue.pollMs }),
        ];
      }
      for (const t of transports) await t.start();
      await announceAgents(context);
      // Only an executor that runs every agent of its config, and some agent, judges a job's
      // agent unknown (one without agents serves agents elsewhere: their jobs are not its own).
      if (options.agents === undefined && agents.length > 0) {
        sweeping = createUnknownAgentSweep(context, {
          known: new Set([...Object.keys(config.agents), ...agents]),
          ...(config.nats && nc ? { stream: openUnconsumedJobs(nc, config.nats) } : {}),
          ...(options.unknownAgentSweepMs ? { intervalMs: options.unknownAgentSweepMs } : {}),
        }).run();
      }
      if (agents.length === 0) {
        log.info(
          { transport, agents, owner, submitOnly: true },
          "executor started without agents: it runs none here and serves the submit API for agents elsewhere (HTTP POST /v1/outputs; NATS <subjectPrefix>.submit on JetStream); configure agents.<name> to run agents here",
        );
      } else log.info({ transport, agents, owner }, "executor started");
    },
    abandon: () => abandon("told to stop at once"),
    stop(stopOptions = {}) {
      stopping ??= (async () => {
        stopController.abort();
        // A transport's stop waits for its deliveries in flight: the grace runs beside it.
        const stopped = Promise.allSettled(transports.map((t) => t.stop()));
        await drain(stopOptions.graceMs ?? config.queue.stopGraceMs);
        await stopped;
        await Promise.allSettled([...inflight, sweeping]);
        // Bounded: with the server gone, a drain would wait for a reconnect and SIGTERM would hang.
        if (nc && ownConnection) await closeNats(nc);
        log.info("executor stopped");
      })();
      return stopping;
    },
  };
}
