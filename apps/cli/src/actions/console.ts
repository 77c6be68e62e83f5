import { runConsoleProcess } from "@idem/console";
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
  let port: number | undefined;
  if (opts.port !== undefined) {
    port = Number(opts.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CliError("--port must be an integer from 0 to 65535", EXIT.USAGE);
  }
  await runConsoleProcess(config, {
    host: opts.host,
    port,
    readOnly: opts.readOnly,
    actor: `${personOf(opts.actor)} (console)`,
    logFormat: logFormatOption(opts.logFormat),
    onListening(server) {
      const mode = (opts.readOnly ?? config.console.readOnly) ? ", read-only" : "";
      const auth = config.api.token === null ? "no token" : "api.token required";
      process.stdout.write(`idem console: ${server.url} (${auth}${mode}); Ctrl-C stops it\n`);
    },
  });
}
