import type { Command } from "commander";
import { LOG_FORMAT_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

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
    .action(lazyAction(async () => (await import("../actions/console.js")).runConsole));
}
