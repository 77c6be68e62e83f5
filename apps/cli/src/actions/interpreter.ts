import { openEffects, openVerifiedJournal, whenAvailable } from "@idem/core";
import { createInterpreter, createInterpreterMetrics } from "@idem/interpreter";
import {
  createLogger,
  type HttpServer,
  onStopSignal,
  startMetricsServer,
  startTelemetry,
} from "@idem/runtime";
import { createFaultHook } from "@idem/schema";
import type { Command } from "commander";
import { CliError, EXIT, exitHolder, loadConfigWithKinds } from "../context.js";
import { logFormatOption } from "../options.js";
import { jsonText } from "../render/terminal-text.js";

interface InterpreterCommandOptions {
  once?: boolean;
  concurrency?: string;
  json?: boolean;
  config?: string;
  logFormat?: string;
}

/** `idem interpreter`, imported when it runs (its options and help: commands/interpreter.ts). */
export async function runInterpreter(
  opts: InterpreterCommandOptions,
  command: Command,
): Promise<void> {
  const format = logFormatOption(opts.logFormat);
  // --config may be taken by the program-level option when it follows the subcommand.
  const config = await loadConfigWithKinds({ ...command.optsWithGlobals(), ...opts });
  const concurrency = Number(opts.concurrency ?? "1");
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
    throw new CliError(
      `--concurrency must be an integer from 1 to 256, got ${opts.concurrency}`,
      EXIT.USAGE,
    );
  }
  let fault: ReturnType<typeof createFaultHook>;
  try {
    fault = createFaultHook(process.env.IDEM_FAULT, () => {
      process.kill(process.pid, "SIGKILL");
    });
  } catch (e) {
    throw new CliError((e as Error).message, EXIT.USAGE);
  }
  const logger = createLogger({ name: "idem-interpreter", format });
  // Off unless telemetry.otlpUrl or OTEL_EXPORTER_OTLP_ENDPOINT is set; shut down last.
  const tracing = startTelemetry({ config, service: "idem-interpreter", logger });
  // Started during an outage of its journal, it waits for the end of it instead of exiting;
  // a stop signal meanwhile ends the wait.
  const waiting = new AbortController();
  const disposeWait = onStopSignal(() => waiting.abort());
  const opened = await whenAvailable("the journal", () => openVerifiedJournal(config), {
    logger,
    signal: waiting.signal,
  }).finally(disposeWait);
  if (!opened) {
    await tracing.shutdown();
    return;
  }
  const journal = opened;
  // The fault hook reaches inside applies (interpreter.after-push); a first clone of a remote's
  // mirror shows its progress on a terminal.
  const effects = openEffects(config, {
    fault,
    ...(process.stderr.isTTY
      ? {
          onProgress: (_kind, p) =>
            process.stderr.write(`\r${p.what}: ${p.stage} ${p.percent}%   `),
        }
      : {}),
  });
  const metrics = createInterpreterMetrics();
  const interpreter = createInterpreter({
    config,
    journal,
    effects,
    fault,
    logger,
    metrics,
    concurrency,
    tracing,
  });
  let server: HttpServer | undefined;
  let stopRequested: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => {
    stopRequested = resolve;
  });
  // One stop: the first signal is logged and stops the loops (or a --once drain); this stop
  // and the one after the loops end are the same call.
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
    if (opts.once) {
      const result = await interpreter.drain();
      if (opts.json) {
        process.stdout.write(`${jsonText(result, 0)}\n`);
      } else {
        const r = result.runs;
        process.stdout.write(
          `interpreter: ${r.done} done, ${r.failed} retries scheduled, ${r.dead} dead, ${r.released} released, ${r["lease-lost"]} lost to another holder\n`,
        );
        for (const d of result.dead) {
          process.stdout.write(`  dead: ${d.jobId}#${d.generation} (${d.class}) ${d.error}\n`);
        }
      }
      exitHolder.code = result.endedDead ? EXIT.FAILED : EXIT.OK;
    } else {
      interpreter.start();
      // A journal that failed for good ends the process (exit 1) so its supervisor restarts it.
      const failure = await Promise.race([stopped.then(() => undefined), interpreter.fatal]);
      await stopOnce();
      if (failure) throw failure;
      exitHolder.code = EXIT.OK;
    }
  } finally {
    disposeSignals();
    await server?.close();
    await effects.close();
    await journal.close();
    await tracing.shutdown();
  }
}
