import { startConsole } from "@idem/console";
import { createLogger, openTargets, startTelemetry } from "@idem/core";
import type { Command } from "commander";
import { actorOf, CliError, EXIT, loadConfig, openConfiguredJournal } from "../context.js";
import { LOG_FORMAT_HELP, logFormatOption } from "../options.js";

interface ConsoleCommandOptions {
  host?: string;
  port?: string;
  readOnly?: boolean;
  actor?: string;
  logFormat?: string;
  config?: string;
}

/**
 * Registers `idem console`: the operator console on `console.host`/`console.port` until Ctrl-C or
 * SIGTERM. It opens the config's journal and targets as the CLI's own commands do and calls the
 * same @idem/core functions for every page and action.
 */
export function register(program: Command): void {
  program
    .command("console")
    .description(
      "serves the operator console (overview, outputs, dead letters, replay, audit) on console.host:console.port",
    )
    .option("--host <host>", "listen on this host (default: console.host, 127.0.0.1)")
    .option("--port <n>", "listen on this port (default: console.port, 7071; 0 picks a free one)")
    .option("--read-only", "hide and refuse every action (default: console.readOnly)")
    .option("--actor <name>", "who acts by default in the forms (default $IDEM_ACTOR or $USER)")
    .option("--log-format <format>", LOG_FORMAT_HELP)
    .action(async (opts: ConsoleCommandOptions, cmd: Command) => {
      const config = loadConfig(cmd.optsWithGlobals());
      let port: number | undefined;
      if (opts.port !== undefined) {
        port = Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw new CliError("--port must be an integer from 0 to 65535", EXIT.USAGE);
      }
      const logger = createLogger({
        name: "idem-console",
        format: logFormatOption(opts.logFormat),
      });
      const journal = await openConfiguredJournal(config);
      const effects = openTargets(config);
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
          actor: `${actorOf(opts.actor)} (console)`,
          ...(opts.readOnly && { readOnly: true }),
          ...(opts.host !== undefined && { host: opts.host }),
          ...(port !== undefined && { port }),
          tracing,
        });
        const mode = (opts.readOnly ?? config.console.readOnly) ? ", read-only" : "";
        const auth = config.api.token === null ? "no token" : "api.token required";
        process.stdout.write(`idem console: ${server.url} (${auth}${mode}); Ctrl-C stops it\n`);
        await new Promise<void>((resolve) => {
          const stop = () => {
            process.off("SIGINT", stop);
            process.off("SIGTERM", stop);
            resolve();
          };
          process.on("SIGINT", stop);
          process.on("SIGTERM", stop);
        });
        await server.close();
      } finally {
        await tracing.shutdown();
        await effects.close();
        await journal.close();
      }
    });
}
