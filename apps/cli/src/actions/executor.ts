import { resolve } from "node:path";
import { assertConfigInvariants, resolveCredentials } from "@idem/core";
import { type ApiServer, createExecutor, type Executor, startApiServer } from "@idem/executor";
import type { JournalStore } from "@idem/journal";
import { assertListenAllowed, createLogger, startTelemetry } from "@idem/runtime";
import { type Config, createFaultHook, type FaultPoint } from "@idem/schema";
import type { Command } from "commander";
import { CliError, EXIT, loadConfig } from "../context.js";
import { openVerifiedJournal } from "../ops/open-verified-journal.js";
import { onStopSignal } from "../ops/stop-signal.js";
import { whenAvailable } from "../ops/when-available.js";
import { graceOption, logFormatOption } from "../options.js";

/**
 * The MCP host for the agents with `agents.<name>.mcp` (docs/mcp.md), undefined when none has it
 * (@idem/mcp and the MCP SDK are then not loaded). Their relay command runs this same idem.
 */
async function mcpHostOf(config: Config, journal: JournalStore) {
  if (!Object.values(config.agents).some((a) => a.mcp)) return undefined;
  const { createMcpAgentHost } = await import("@idem/mcp");
  const idem = [process.execPath, resolve(process.argv[1] ?? "idem")];
  return createMcpAgentHost({ config, journal, idem, actor: "executor (mcp)" });
}

/** `idem executor`, imported when it runs (its options and help: commands/executor.ts). */
export async function runExecutor(
  opts: { host?: string; port?: string; api?: boolean; logFormat?: string; grace?: string },
  cmd: Command,
): Promise<void> {
  const format = logFormatOption(opts.logFormat);
  const config = loadConfig(cmd.optsWithGlobals());
  const graceMs = graceOption(opts.grace) ?? config.queue.stopGraceMs;
  if (Object.keys(config.agents).length === 0 && opts.api === false && !config.nats) {
    throw new CliError(
      "nothing to do: no agents configured (agents.<name>) and --no-api (an executor without agents serves only the submit API)",
      EXIT.USAGE,
    );
  }
  // Invariant 7, before any connection: exit 3 with the doctor's words.
  assertConfigInvariants(config);
  // An API beyond loopback without a token: exit 2 before anything starts (docs/security.md).
  if (opts.api !== false)
    assertListenAllowed({
      what: "the HTTP API",
      host: opts.host ?? config.api.host,
      token: config.api.token,
      hostKey: "api.host",
    });
  // An agent's token variable unset: exit 2 naming the key, before the journal is looked for.
  const credentials = opts.api === false ? undefined : resolveCredentials(config, process.env);
  let port: number | undefined;
  if (opts.port !== undefined) {
    port = Number(opts.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CliError(`--port ${opts.port} is not a port`, EXIT.USAGE);
  }
  let fault: (p: FaultPoint) => void;
  try {
    fault = createFaultHook(process.env.IDEM_FAULT, () => process.kill(process.pid, "SIGKILL"));
  } catch (e) {
    throw new CliError((e as Error).message, EXIT.USAGE);
  }
  const logger = createLogger({ name: "idem-executor", format });
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
  // A second stop signal abandons what still runs at once (agents killed, jobs given back)
  // instead of killing this process before it has cleaned up.
  const disposeSignals = onStopSignal(
    (s) => stopSignal(s),
    () => executor?.abandon(),
  );
  let journal: JournalStore | undefined;
  let executor: Executor | undefined;
  let api: ApiServer | undefined;
  try {
    // Started during an outage (the journal or NATS down, a cluster electing its leaders), it
    // waits for the end of it instead of exiting.
    const started = await whenAvailable(
      "the journal or NATS",
      async () => {
        const j = await openVerifiedJournal(config);
        const mcp = await mcpHostOf(config, j);
        const x = createExecutor({
          config,
          journal: j,
          logger,
          fault,
          tracing,
          ...(mcp && { mcp }),
        });
        // The executor waits for NATS inside start(): a stop signal meanwhile must end that wait
        // too, so that the first SIGTERM exits 0 (docs/cli.md), not the second.
        const stopStarting = () => void x.stop();
        stop.signal.addEventListener("abort", stopStarting, { once: true });
        try {
          await x.start();
          return { journal: j, executor: x };
        } catch (e) {
          await x.stop().catch(() => {});
          await j.close().catch(() => {});
          throw e;
        } finally {
          stop.signal.removeEventListener("abort", stopStarting);
        }
      },
      { logger, signal: stop.signal },
    );
    if (!started) return; // told to stop while it waited
    ({ journal, executor } = started);
    if (opts.api !== false) {
      api = await startApiServer({
        config,
        journal,
        ...(credentials ? { credentials } : {}),
        metrics: executor.metrics,
        logger,
        tracing,
        ...(executor.publisher ? { publisher: executor.publisher } : {}),
        ...(port === undefined ? {} : { port }),
        ...(opts.host === undefined ? {} : { host: opts.host }),
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
    await executor?.stop({ graceMs });
    await journal?.close();
    await tracing.shutdown();
    disposeSignals();
  }
}
