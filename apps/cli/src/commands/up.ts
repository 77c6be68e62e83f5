import type { Command } from "commander";
import { GRACE_HELP, LOG_FORMAT_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

/**
 * Registers `idem up`: the executor and the interpreter (and, with `--console`, the operator
 * console) as supervised child processes with prefixed logs, restarted with backoff, stopped
 * together on Ctrl-C; a child exiting 2 or 3 (a restart cannot fix it) stops them all with its code.
 */
export function register(program: Command): void {
  program
    .command("up")
    .description(
      "runs the executor and the interpreter as two child processes with prefixed logs, restarted with backoff, stopped together on Ctrl-C",
    )
    .option("--concurrency <n>", "the interpreter's --concurrency", "1")
    .option("--log-format <format>", LOG_FORMAT_HELP)
    .option("--grace <seconds>", GRACE_HELP)
    .option(
      "--console",
      "also serve the operator console (idem console) on console.host:console.port",
    )
    .action(lazyAction(async () => (await import("../actions/up.js")).runUp));
}
