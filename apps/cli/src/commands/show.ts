import type { Command } from "commander";
import { WIDE_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("show")
    .description("an output, its runs, its effects with their state, and its events")
    .argument("<job>", "job ID")
    .option("--archive", "read it from the archive written by idem prune")
    .option("--json", "print JSON")
    .option("--wide", WIDE_HELP)
    .action(lazyAction(async () => (await import("../actions/show.js")).runShow));
}
