import { openEffects } from "@idem/core";
import { openVerifiedJournal, whenAvailable } from "@idem/core/readiness";
import {
  createLogger,
  type HttpServer,
  type LogFormat,
  onStopSignal,
  startMetricsServer,
  startTelemetry,
} from "@idem/runtime";
import type { Config, FaultHook } from "@idem/schema";
import { createInterpreter, type DrainResult } from "./interpreter.js";
import { createInterpreterMetrics } from "./interpreter-metrics.js";

/** How `idem interpreter` runs this process (its command-line options, parsed). */
export interface InterpreterProcessOptions {
  /** Drain what is due and stop (`--once`) instead of running until a stop signal. */
  once?: boolean;
  concurrency: number;
  logFormat?: LogFormat | undefined;
  fault: FaultHook;
  /** Shows the progress of a first clone of a remote's mirror (a terminal's line). */
  onProgress?(what: string, stage: string, percent: number): void;
}

/**
 * The interpreter process's composition root: telemetry, the journal verified (waited for through
 * an outage; a stop signal meanwhile ends the wait), the effects, the metrics server, then either a
 * drain (`once`) or a run until SIGTERM/SIGINT or a journal that failed for good.
 * @returns the drain's result with `once`; undefined otherwise, or when stopped while waiting.
 * @throws INTEGRITY for a journal refused before start; the journal's failure for good.
 */
export async function runInterpreterProcess(
  config: Config,
  options: InterpreterProcessOptions,
): Promise<DrainResult | undefined> {
  const logger = createLogger({ name: "idem-interpreter", format: options.logFormat });
  // Off unless telemetry.otlpUrl or OTEL_EXPORTER_OTLP_ENDPOINT is set; shut down last.
  const tracing = startTelemetry({ config, service: "idem-interpreter", logger });
  const waiting = new AbortController();
  const disposeWait = onStopSignal(() => waiting.abort());
  const journal = await whenAvailable("the journal", () => openVerifiedJournal(config), {
    logger,
    signal: waiting.signal,
  })
    .catch(async (e: unknown) => {
      await tracing.shutdown();
      throw e;
    })
    .finally(disposeWait);
  if (!journal) {
    await tracing.shutdown();
    return undefined;
  }
  // The fault hook reaches inside applies (interpreter.after-push).
  const progress = options.onProgress;
  const effects = openEffects(config, {
    fault: options.fault,
    ...(progress ? { onProgress: (_kind, p) => progress(p.what, p.stage, p.percent) } : {}),
  });
  const metrics = createInterpreterMetrics();
  const interpreter = createInterpreter({
    config,
    journal,
    effects,
    fault: options.fault,
    logger,
    metrics,
    concurrency: options.concurrency,
    tracing,
  });
  let server: HttpServer | undefined;
  let stopRequested: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => {
    stopRequested = resolve;
  });
  // One stop: the first signal is logged and stops the loops (or a drain); this stop and the one
  // after the loops end are the same call.
  let stopping: Promise<void> | undefined;
  const stopOnce = () => {
    stopping ??= interpreter.stop();
    return stopping;
  };
  const disposeSignals = onStopSignal((signal) => {
    logger.info({ event: "interpreter.signal", signal }, "stopping after the current effect");
    stopRequested?.();
    void stopOnce();
  });
  try {
    if (config.interpreter.metricsPort !== null) {
      server = await startMetricsServer({
        registry: metrics.registry,
        port: config.interpreter.metricsPort,
      });
      logger.info({ event: "metrics.listening", port: server.port }, "metrics on /metrics");
    }
    if (options.once) return await interpreter.drain();
    interpreter.start();
    // A journal that failed for good ends the process (exit 1) so its supervisor restarts it.
    const failure = await Promise.race([stopped.then(() => undefined), interpreter.fatal]);
    await stopOnce();
    if (failure) throw failure;
    return undefined;
  } finally {
    disposeSignals();
    await server?.close();
    await effects.close();
    await journal.close();
    await tracing.shutdown();
  }
}
