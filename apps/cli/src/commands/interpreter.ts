import type { Command } from "commander";
import { LOG_FORMAT_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

/**
 * Registers `idem interpreter`: the interpreter's pool of runs until SIGTERM/SIGINT (finish the current effect,
 * release, exit 0), or with `--once` until no run is left (exit 1 if one ended dead). Serves
 * `/metrics` on `interpreter.metricsPort` when set. Exit 2 for a bad `--concurrency` or
 * `IDEM_FAULT`, 1 when the journal fails for good.
 */
export function register(program: Command): void {
  program
    .command("interpreter")
    .description(
      "runs the interpreter: claims runs, probes and applies their effects once (SIGTERM/SIGINT: finish the current effect, release, exit 0)",
    )
    .option(
      "--once",
      "work until no run is pending, running or waiting for a retry, then exit: 0, or 1 if a run ended dead",
    )
    .option(
      "--concurrency <n>",
      "runs on different targets held at once, each with up to interpreter.pipeline runs following it",
      "1",
    )
    .option("--json", "with --once: print the summary as JSON")
    .option("--log-format <format>", LOG_FORMAT_HELP)
    .action(lazyAction(async () => (await import("../actions/interpreter.js")).runInterpreter));
}
