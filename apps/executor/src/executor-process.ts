import {
  assertConfigInvariants,
  openVerifiedJournal,
  resolveCredentials,
  whenAvailable,
} from "@idem/core";
import type { JournalStore } from "@idem/journal";
import {
  assertListenAllowed,
  createLogger,
  type LogFormat,
  type Logger,
  onStopSignal,
  startTelemetry,
  type Tracing,
} from "@idem/runtime";
import type { Config, FaultHook } from "@idem/schema";
import type { McpAgentHost } from "./agent-runner.js";
import { type ApiServer, startApiServer } from "./api-server.js";
import { createExecutor, type Executor } from "./executor.js";

/** How `idem executor` runs this process (its command-line options, parsed). */
export interface ExecutorProcessOptions {
  /** Serve the HTTP API (default true). */
  api?: boolean;
  host?: string | undefined;
  port?: number | undefined;
  /** How long a stop waits for the agents that still run (`queue.stopGraceMs` by default). */
  graceMs: number;
  logFormat?: LogFormat | undefined;
  fault: FaultHook;
  /** The MCP host for agents with `agents.<name>.mcp`, made once the journal is open. */
  mcpHost?(journal: JournalStore): Promise<McpAgentHost | undefined>;
}

/**
 * The executor process's composition root: the config's invariants and the API's listen rule
 * checked before any connection, telemetry, the journal verified and the executor started (both
 * waited for through an outage), the HTTP API, then a run until SIGTERM/SIGINT (a drain of
 * `graceMs`; a second signal abandons the agents that still run) or a journal that failed for good.
 * @throws INTEGRITY for a config or journal refused before start; the journal's failure for good.
 */
export async function runExecutorProcess(
  config: Config,
  options: ExecutorProcessOptions,
): Promise<void> {
  // Invariant 7, before any connection: exit 3 with the doctor's words.
  assertConfigInvariants(config);
  // An API beyond loopback without a token: refused before anything starts (docs/security.md).
  if (options.api !== false)
    assertListenAllowed({
      what: "the HTTP API",
      host: options.host ?? config.api.host,
      token: config.api.token,
      hostKey: "api.host",
    });
  // An agent's token variable unset: refused naming the key, before the journal is looked for.
  const credentials = options.api === false ? undefined : resolveCredentials(config, process.env);
  const logger = createLogger({ name: "idem-executor", format: options.logFormat });
  // Off unless telemetry.otlpUrl or OTEL_EXPORTER_OTLP_ENDPOINT is set; shut down last, so the
  // spans of the drain are exported before the process exits.
  const tracing = startTelemetry({ config, service: "idem-executor", logger });
  const stop = new AbortController();
  let stopSignal: (s: NodeJS.Signals) => void = () => {};
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    stopSignal = (s) => {
      stop.abort();
      resolve(s);
    };
  });
  let started: Started | undefined;
  // A second stop signal abandons what still runs at once (agents killed, jobs given back)
  // instead of killing this process before it has cleaned up.
  const disposeSignals = onStopSignal(
    (s) => stopSignal(s),
    () => started?.executor.abandon(),
  );
  let api: ApiServer | undefined;
  try {
    // Started during an outage (the journal or NATS down, a cluster electing its leaders), it
    // waits for the end of it instead of exiting.
    started = await whenAvailable(
      "the journal or NATS",
      () => startExecutor(config, options, logger, tracing, stop.signal),
      { logger, signal: stop.signal },
    );
    if (!started) return; // told to stop while it waited
    const { journal, executor } = started;
    if (options.api !== false) {
      api = await startApiServer({
        config,
        journal,
        ...(credentials ? { credentials } : {}),
        metrics: executor.metrics,
        logger,
        tracing,
        ...(executor.publisher ? { publisher: executor.publisher } : {}),
        ...(options.port === undefined ? {} : { port: options.port }),
        ...(options.host === undefined ? {} : { host: options.host }),
      });
      logger.info({ url: api.url }, "HTTP API listening");
    }
    // A journal that failed for good ends the process (exit 1) so its supervisor restarts it:
    // alive, it would only hold deliveries it cannot record.
    const ended = await Promise.race([
      signal.then((s) => ({ signal: s })),
      executor.fatal.then((failure) => ({ failure })),
    ]);
    if ("failure" in ended) throw ended.failure;
    logger.info({ signal: ended.signal }, "draining");
  } finally {
    await api?.close();
    await started?.executor.stop({ graceMs: options.graceMs });
    await started?.journal.close();
    await tracing.shutdown();
    disposeSignals();
  }
}

interface Started {
  journal: JournalStore;
  executor: Executor;
}

/** Opens the journal and starts the executor; on a failure both are closed again. */
async function startExecutor(
  config: Config,
  options: ExecutorProcessOptions,
  logger: Logger,
  tracing: Tracing,
  stop: AbortSignal,
): Promise<Started> {
  const journal = await openVerifiedJournal(config);
  const mcp = await options.mcpHost?.(journal);
  const executor = createExecutor({
    config,
    journal,
    logger,
    fault: options.fault,
    tracing,
    ...(mcp && { mcp }),
  });
  // The executor waits for NATS inside start(): a stop signal meanwhile must end that wait too, so
  // that the first SIGTERM exits 0 (docs/cli.md), not the second.
  const stopStarting = () => void executor.stop();
  stop.addEventListener("abort", stopStarting, { once: true });
  try {
    await executor.start();
    return { journal, executor };
  } catch (e) {
    await executor.stop().catch(() => {});
    await journal.close().catch(() => {});
    throw e;
  } finally {
    stop.removeEventListener("abort", stopStarting);
  }
}
