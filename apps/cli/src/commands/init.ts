import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("init")
    .description("write a default idem.config.json and an empty journal in the current directory")
    .option("--force", "overwrite an existing config")
    .option("--json", "print JSON")
    .action(lazyAction(async () => (await import("../actions/init.js")).runInit));
}
