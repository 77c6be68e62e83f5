import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("init")
    .description(
      "write a default idem.config.json and an empty journal in the current directory (--example: a runnable project around them); with --journal, create the journal of an existing config",
    )
    .option(
      "--example",
      "also write a runnable project: a command agent, a git repository it commits to, a job and a README that walks through it",
    )
    .option("--force", "overwrite an existing config")
    .option(
      "--journal",
      "keep the existing config and create its journal (the SQLite file, or the tables in its PostgreSQL database)",
    )
    .option("--json", "print JSON")
    .action(lazyAction(async () => (await import("../actions/init.js")).runInit));
}
