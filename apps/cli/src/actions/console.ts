import { startConsole } from "@idem/console";
import { openEffects, openVerifiedJournal } from "@idem/core";
import { assertListenAllowed, createLogger, startTelemetry } from "@idem/runtime";
import type { Command } from "commander";
import { CliError, EXIT, loadConfigWithKinds } from "../context.js";
import { personOf } from "../ops/person.js";
import { logFormatOption } from "../options.js";

interface ConsoleCommandOptions {
  host?: string;
  port?: string;
  readOnly?: boolean;
  actor?: string;
  logFormat?: string;
  config?: string;
}

/** `idem console`, imported when it runs (its options and help: commands/console.ts). */
export async function runConsole(opts: ConsoleCommandOptions, cmd: Command): Promise<void> {
  const config = await loadConfigWithKinds(cmd.optsWithGlobals());
  // Beyond loopback without a token: exit 2 before anything opens (docs/security.md).
  assertListenAllowed({
    what: "the console",
    host: opts.host ?? config.console.host,
    token: config.api.token,
    hostKey: "console.host",
  });
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
      actor: `${personOf(opts.actor)} (console)`,
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
}
