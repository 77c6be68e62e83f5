import { openEffects, openVerifiedJournal } from "@idem/core";
import {
  assertListenAllowed,
  createLogger,
  type LogFormat,
  onStopSignal,
  startTelemetry,
} from "@idem/runtime";
import type { Config } from "@idem/schema";
import { type RunningConsole, startConsole } from "./console-app.js";

/** How `idem console` runs this process (its command-line options, parsed). */
export interface ConsoleProcessOptions {
  host?: string | undefined;
  port?: number | undefined;
  readOnly?: boolean | undefined;
  /** Who acts through this console (`<person> (console)`), in the journal's events. */
  actor: string;
  logFormat?: LogFormat | undefined;
  /** Told once the console listens (the CLI prints its URL). */
  onListening?(server: RunningConsole): void;
}

/**
 * The console process's composition root: the listen rule checked before anything opens, the
 * journal verified, the effects, telemetry, the console served until SIGINT or SIGTERM.
 * @throws INTEGRITY for a journal refused before start; the listen rule's refusal.
 */
export async function runConsoleProcess(
  config: Config,
  options: ConsoleProcessOptions,
): Promise<void> {
  // Beyond loopback without a token: refused before anything opens (docs/security.md).
  assertListenAllowed({
    what: "the console",
    host: options.host ?? config.console.host,
    token: config.api.token,
    hostKey: "console.host",
  });
  const logger = createLogger({ name: "idem-console", format: options.logFormat });
  const journal = await openVerifiedJournal(config);
  const effects = openEffects(config);
  const tracing = startTelemetry({
    config,
    service: "idem-console",
    logger,
    shutdownTimeoutMs: 2_000,
  });
  try {
    const server = await startConsole({
      config,
      journal,
      effects,
      actor: options.actor,
      ...(options.readOnly && { readOnly: true }),
      ...(options.host !== undefined && { host: options.host }),
      ...(options.port !== undefined && { port: options.port }),
      tracing,
    });
    options.onListening?.(server);
    await new Promise<void>((resolve) => {
      const dispose = onStopSignal(() => {
        dispose();
        resolve();
      });
    });
    await server.close();
  } finally {
    await tracing.shutdown();
    await effects.close();
    await journal.close();
  }
}
