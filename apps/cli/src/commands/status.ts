import type { Command } from "commander";
import { WIDE_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("status")
    .description(
      "counts of outputs, latest runs by state, effects by state, rejections and dead letters",
    )
    .option("--json", "print JSON")
    .option("--wide", WIDE_HELP)
    .action(lazyAction(async () => (await import("../actions/status.js")).runStatus));
}
